package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Session hands over prompts, resources and resource templates as it
// hands over tools (issue 35): only those the current record compared and
// lets through, each the object the core wrote from what it hashed; a
// prompts/get or resources/read of anything else is refused with an
// *ItemRefusedError.

// ItemRefusedError is the error of a prompt, resource or resource template
// the record does not let through: withheld (Effect set), not in the
// checked list, or of a list the lockfile pins none of (NotCompared).
type ItemRefusedError struct {
	List        string // "prompts", "resources", "resource_templates" or "ui_templates"
	Key         string // the name, uri or uriTemplate asked for
	Effect      string // the item's effect when the record withholds it
	NotCompared bool
	// Parts are the parts of a ui:// template (List "ui_templates") that
	// differ from its pin; Reason, without them, why it was refused
	// (not_named, or ui_template_check's reason).
	Parts  []string
	Reason string
	Record Record
	// text is the session engine's refusal of a prompts/get or
	// resources/read (its refuse action), the refusal op's item words; ""
	// asks the refusal op.
	text string
}

// Error is the core's words for the refusal (the refusal op's item), every
// string from the server shown through escape_text: the same bytes the JS
// and Python wrappers raise.
func (e *ItemRefusedError) Error() string {
	if e.text != "" {
		return e.text
	}
	// A listing refused names no key: the whole list is.
	item := map[string]any{"list": e.List}
	if e.Key != "" {
		item["key"] = e.Key
	}
	if len(e.Parts) > 0 {
		item["parts"] = e.Parts
	} else if e.Reason != "" {
		item["reason"] = e.Reason
	}
	var out struct {
		Text string `json:"text"`
	}
	if err := corecall.Into("refusal", map[string]any{"record": corecall.Text(e.Record.Raw), "item": item}, &out); err != nil {
		return fmt.Sprintf("crawlcheck: %s %s refused (record %s)", e.List, shownText(e.Key), e.Record.RecordSHA256)
	}
	return out.Text
}

// shownText is s as a person may read it (the core's escape_text), quoted.
func shownText(s string) string {
	var out struct {
		Text string `json:"text"`
	}
	if corecall.Into("escape_text", map[string]any{"text": s}, &out) != nil {
		return "(a text that cannot be shown)"
	}
	return `"` + out.Text + `"`
}

// handed is the record's handoff of one list, for a listing: a list the
// check did not compare is refused whole (the handoff has none of it).
func (s *Session) handed(ctx context.Context, list string) (HandedList, error) {
	rec, _, err := s.gate(ctx)
	if err != nil {
		return HandedList{}, err
	}
	h, ok := rec.Handoff.Features[list]
	if !ok {
		return h, &ItemRefusedError{List: list, NotCompared: true, Record: rec}
	}
	return h, nil
}

// admitItem asks the session engine whether a prompts/get (MethodGet) or a
// resources/read (MethodRead) of key may reach the server, as CallTool asks
// it of a tools/call: nil, the session's *RefusedError, or the item's
// *ItemRefusedError in the engine's words.
func (s *Session) admitItem(ctx context.Context, method, key string) error {
	member := "name"
	if method == MethodRead {
		member = "uri"
	}
	st, rec, err := s.judge(ctx, func() (Step, error) { return s.engine.Item(method, member, key) })
	if err != nil || st.Allowed {
		return err
	}
	if st.RefusedList == "" {
		// Not an item's refusal: the session's (it does not proceed).
		return &RefusedError{Effect: rec.Effect, Record: rec, text: st.Refusal}
	}
	items, compared := rec.Features[st.RefusedList]
	return &ItemRefusedError{List: st.RefusedList, Key: st.RefusedKey, Effect: items[st.RefusedKey], NotCompared: !compared, Record: rec, text: st.Refusal}
}

// handedItems parses the handed objects with the SDK's own type; one the
// type cannot hold is left out rather than handed over changed.
func handedItems[T any](h HandedList, key func(*T) string) []*T {
	out := []*T{}
	for _, it := range h.Items {
		v := new(T)
		if json.Unmarshal([]byte(it.Item), v) != nil || key(v) != it.Key {
			continue
		}
		out = append(out, v)
	}
	return out
}

func noCursor(cursor string) error {
	if cursor != "" {
		return fmt.Errorf("preflight: unknown cursor %q: the session answers in one page", cursor)
	}
	return nil
}

// ListPrompts returns the prompts of the checked list the record lets
// through, in one result without a cursor. Against a lockfile that pins
// no prompts it refuses (*ItemRefusedError, NotCompared).
func (s *Session) ListPrompts(ctx context.Context, params *mcp.ListPromptsParams) (*mcp.ListPromptsResult, error) {
	if params != nil {
		if err := noCursor(params.Cursor); err != nil {
			return nil, err
		}
	}
	h, err := s.handed(ctx, "prompts")
	if err != nil {
		return nil, err
	}
	return &mcp.ListPromptsResult{Prompts: handedItems(h, func(p *mcp.Prompt) string { return p.Name })}, nil
}

// GetPrompt gets a prompt the record lets through, and refuses any other,
// as the session engine decides.
func (s *Session) GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if params == nil {
		return nil, errors.New("preflight: GetPrompt without params names no prompt")
	}
	if err := s.admitItem(ctx, MethodGet, params.Name); err != nil {
		return nil, err
	}
	return s.clientSession().GetPrompt(ctx, params)
}

// ListResources returns the resources of the checked list the record
// lets through, in one result without a cursor.
func (s *Session) ListResources(ctx context.Context, params *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	if params != nil {
		if err := noCursor(params.Cursor); err != nil {
			return nil, err
		}
	}
	h, err := s.handed(ctx, "resources")
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Resources: handedItems(h, func(r *mcp.Resource) string { return r.URI })}, nil
}

// ListResourceTemplates returns the resource templates of the checked
// list the record lets through, in one result without a cursor.
func (s *Session) ListResourceTemplates(ctx context.Context, params *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error) {
	if params != nil {
		if err := noCursor(params.Cursor); err != nil {
			return nil, err
		}
	}
	h, err := s.handed(ctx, "resource_templates")
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: handedItems(h, func(r *mcp.ResourceTemplate) string { return r.URITemplate })}, nil
}

// ReadResource reads a resource of the checked list the record lets
// through, or the ui:// template a tool it hands over names (MCP Apps),
// and refuses any other URI, as the session engine decides (a URI only a
// resource template matches included: no one decides which URIs a
// template matches yet). A ui://
// template is read, then checked by the core against the lockfile's pin
// (ui_template_check): one that is not the template approved is refused,
// never handed to a renderer.
func (s *Session) ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if params == nil {
		return nil, errors.New("preflight: ReadResource without params names no resource")
	}
	if strings.HasPrefix(params.URI, "ui://") {
		return s.readUITemplate(ctx, params)
	}
	if err := s.admitItem(ctx, MethodRead, params.URI); err != nil {
		return nil, err
	}
	// Sent under checkMu, as every resources/read the session sends: a
	// check's ui:// read takes the n-th answer of the method since its mark
	// (fetchAnswer), which a read sent beside it would be.
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	return s.clientSession().ReadResource(ctx, params)
}

// readUITemplate reads a ui:// template a handed tool names and hands it
// over only when the core finds it the one pinned.
func (s *Session) readUITemplate(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	rec, _, err := s.gate(ctx)
	if err != nil {
		return nil, err
	}
	refused := func(reason string, parts []string) error {
		return &ItemRefusedError{List: "ui_templates", Key: params.URI, Reason: reason, Parts: parts, Record: rec}
	}
	tools := make([]json.RawMessage, len(rec.Handoff.Tools))
	for i, t := range rec.Handoff.Tools {
		tools[i] = json.RawMessage(t.Tool)
	}
	var named struct {
		URIs []string `json:"uris"`
	}
	if err := corecall.Into("ui_templates", map[string]any{"tools": tools}, &named); err != nil || !slices.Contains(named.URIs, params.URI) {
		return nil, refused("not_named", nil)
	}
	s.mu.Lock()
	lock, cs := s.lock, s.cs
	s.mu.Unlock()
	// Under checkMu: fetchAnswer takes the n-th resources/read answer since
	// its mark, so no other read (a check's, or the app's) may be sent
	// while it waits (docs/decisions.md, concurrent reads).
	s.checkMu.Lock()
	answer, failure := s.t.fetchAnswer(ctx, MethodRead, func(c context.Context) error {
		_, err := cs.ReadResource(c, params)
		return err
	})
	s.checkMu.Unlock()
	if failure != "" {
		return nil, fmt.Errorf("preflight: reading %s: %s", shownText(params.URI), failure)
	}
	var check struct {
		Same     bool     `json:"same"`
		Parts    []string `json:"parts"`
		Reason   *string  `json:"reason"`
		Template *string  `json:"template"`
	}
	req := map[string]any{"record": corecall.Text(rec.Raw), "lock": corecall.Text(lock), "uri": params.URI, "result": corecall.Page(answer)}
	if err := corecall.Into("ui_template_check", req, &check); err != nil {
		return nil, err
	}
	if !check.Same {
		if check.Reason != nil {
			return nil, refused(*check.Reason, nil)
		}
		return nil, refused("", check.Parts)
	}
	// The result the core wrote from what it compared, parsed by the SDK's
	// own type: never the answer itself, whose members beside contents no
	// part hashes (encoding/json would take an unpinned "Contents" for it).
	var res mcp.ReadResourceResult
	if check.Template == nil {
		return nil, refused("malformed", nil)
	}
	if err := json.Unmarshal([]byte(*check.Template), &res); err != nil {
		return nil, refused("malformed", nil)
	}
	return &res, nil
}

func (s *Session) clientSession() *mcp.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cs
}

// ConfirmFeatures is Confirm that also approves the prompts, resources,
// resource templates and ui:// templates as offered now (the core's
// approve_features): the caller has shown a person each changed item of
// the current record (escaped, as every server string is) with its scan,
// and the person approved them with the tools named. The items' changes
// need no name; the lists the record's observation read are pinned anew
// from that same observation, one it did not read keeps its pin, and what
// is approved is the core's rule. A change of the instructions is not
// approved by it (ConfirmInstructions), nor is a session observation.
func (s *Session) ConfirmFeatures(names ...string) (Record, error) {
	return s.confirm(names, ApproveOptions{Features: true})
}
