package scenario

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the scenario offers beside tools (issue 35): prompts, resources,
// resource templates and resources/read answers (an MCP Apps ui://
// template among them), each answered below the SDK with the bytes the
// file holds, like tools/list, so that a test controls exactly what a
// client reads.

// offersResources reports whether the scenario declares resources.
func (f *File) offersResources() bool {
	return f.Resources != nil || f.ResourceTemplates != nil || f.Reads != nil
}

// capabilities are the server's: tools always, prompts and resources when
// the scenario offers them.
func (s *Server) capabilities() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: *s.file.ListChanged}}
	if s.file.Prompts != nil {
		c.Prompts = &mcp.PromptCapabilities{ListChanged: s.file.PromptsListChanged}
	}
	if s.file.offersResources() {
		c.Resources = &mcp.ResourceCapabilities{}
	}
	return c
}

// answerFeature answers prompts/list, resources/list,
// resources/templates/list and resources/read; ok is false for any other
// method, or when the scenario does not offer that list (the SDK then
// answers method not found).
func (s *Server) answerFeature(id json.RawMessage, method string, params json.RawMessage) (answer, bool) {
	list := func(member string, items []json.RawMessage) (answer, bool) {
		b := []byte(`{"` + member + `":[`)
		for i, it := range items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, it...)
		}
		return answer{frame: resultFrame(id, append(b, "]}"...))}, true
	}
	switch {
	case method == "prompts/list" && s.file.Prompts != nil:
		return list("prompts", s.state.Prompts())
	case method == "resources/list" && s.file.offersResources():
		return list("resources", s.file.Resources)
	case method == "resources/templates/list" && s.file.offersResources():
		return list("resourceTemplates", s.file.ResourceTemplates)
	case method == "resources/read" && s.file.offersResources():
		var p struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(params, &p)
		if r, ok := s.state.Read(p.URI); ok {
			return answer{frame: resultFrame(id, r)}, true
		}
		return answer{frame: errorFrame(id, int(mcp.CodeResourceNotFound), "Resource not found", nil)}, true
	}
	return answer{}, false
}

// Prompts are the prompt objects served now.
func (s *State) Prompts() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.prompts)
}

// Read is the resources/read result of uri served now.
func (s *State) Read(uri string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reads[uri]
	return r, ok
}

// compactFeatures compacts the scenario's prompts, resources, templates
// and reads, so that each fits on one stdio line.
func (f *File) compactFeatures() error {
	for _, xs := range [][]json.RawMessage{f.Prompts, f.Resources, f.ResourceTemplates} {
		for i, x := range xs {
			c, err := compact(x)
			if err != nil {
				return err
			}
			xs[i] = c
		}
	}
	for u, r := range f.Reads {
		c, err := compact(r)
		if err != nil {
			return err
		}
		f.Reads[u] = c
	}
	return nil
}

// notifyPromptListChanged makes the SDK send
// notifications/prompts/list_changed, as notifyListChanged does for tools:
// a placeholder prompt added and removed (prompts/list is the scenario's).
func (s *Server) notifyPromptListChanged() {
	s.mu.Lock()
	sdks := slices.Clone(s.sdks)
	s.mu.Unlock()
	for _, sdk := range sdks {
		sdk.AddPrompt(&mcp.Prompt{Name: placeholderTool}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
		sdk.RemovePrompts(placeholderTool)
	}
}
