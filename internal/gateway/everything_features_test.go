package gateway_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEverythingFeatures: server-everything (a server nobody here wrote)
// behind the gateway with a lockfile that pins its prompts, resources and
// resource templates: the client lists each from the handoff, gets a
// prompt, reads a listed resource and completes a ref/resource of a listed
// resource's URI and of a template through the gateway, and a URI that
// only a resource template names is refused (the session engine hands over
// no URI by a template). The record compares every list.
func TestEverythingFeatures(t *testing.T) {
	e := everythingEnv(t)
	cmd, stderr := e.gatewayCmd("", e.server)
	s := connectCmd(t, cmd, stderr, nil, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()

	var prompts []string
	for p, err := range s.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("prompts/list: %v\n%s", err, stderr.String())
		}
		prompts = append(prompts, p.Name)
	}
	if !slices.Contains(prompts, "simple-prompt") || !slices.Contains(prompts, "args-prompt") {
		t.Errorf("prompts handed over: %v", prompts)
	}
	var resources []string
	for r, err := range s.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v\n%s", err, stderr.String())
		}
		resources = append(resources, r.URI)
	}
	var templates []string
	for r, err := range s.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/templates/list: %v\n%s", err, stderr.String())
		}
		templates = append(templates, r.URITemplate)
	}
	if len(resources) == 0 || len(templates) == 0 {
		t.Fatalf("resources %v, templates %v: server-everything offers both\n%s", resources, templates, stderr.String())
	}

	got, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"})
	if err != nil || len(got.Messages) == 0 {
		t.Errorf("prompts/get simple-prompt through the gateway: %+v %v", got, err)
	}
	read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources[0]})
	if err != nil || len(read.Contents) == 0 || read.Contents[0].Text == "" && len(read.Contents[0].Blob) == 0 {
		t.Errorf("resources/read %s through the gateway: %+v %v", resources[0], read, err)
	}
	// A completion whose ref/resource names a listed resource's URI (MCP's
	// ResourceTemplateReference: "the URI or URI template of the
	// resource") reaches server-everything, which answers it, as it does
	// for a template's.
	for _, uri := range []string{resources[0], templates[0]} {
		done, err := s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: uri}, Argument: mcp.CompleteParamsArgument{Name: "resourceId", Value: ""}})
		if err != nil || done == nil {
			t.Errorf("completion/complete of ref/resource %s through the gateway: %+v %v", uri, done, err)
		}
	}
	fromTemplate := strings.Replace(templates[0], "{resourceId}", "1", 1)
	_, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: fromTemplate})
	if rpc := refusedBy(t, "a URI only a template names", err); !strings.Contains(rpc.Message, "not in the checked list") {
		t.Errorf("refusal of %s: %s", fromTemplate, rpc.Message)
	}
	s.Close()
	for i, r := range e.records(t) {
		if r.Effect != "proceed" {
			t.Errorf("record %d: %s %+v", i, r.Effect, r.Observations)
		}
		for _, part := range []string{"prompts", "resources", "resource_templates", "ui_templates"} {
			if slices.Contains(blindParts(t, r.Raw), part) {
				t.Errorf("record %d names %s blind", i, part)
			}
		}
	}
}
