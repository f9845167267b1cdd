package service

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
)

// The bounds of a lockfile the service makes (issue 37, F2): make_lock's
// lockfile is some twenty times the tools it pins, so 40,000 one-line
// tools in 2.2 MB took +974 MiB and stored a 45 MB lockfile. A request is
// refused before make_lock runs.
const (
	// DefaultMaxLockTools bounds the tools one lockfile pins (POST lock's
	// tools or pages, and a live reading's pages): the largest public MCP
	// servers list a few hundred.
	DefaultMaxLockTools = 1000
	// DefaultMaxLockBody bounds the body of POST /api/v1/mcp/lock.
	DefaultMaxLockBody = 4 << 20
)

// lockBody bounds the body of POST lock to MaxLockBody; readRequest's 413
// names that limit.
func (s *Service) lockBody(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxLockBody)
}

// tooManyTools answers 413 too_many_tools and true when the tools a
// lockfile would pin are more than MaxLockTools: tools is a request's
// tools member (a JSON array), pages its pages (JSON texts, or
// {"base64": …}). Counting decodes each page's tools array to its
// elements' bytes, no deeper.
func (s *Service) tooManyTools(w http.ResponseWriter, tools json.RawMessage, pages []any) bool {
	n := 0
	if tools != nil {
		var ts []json.RawMessage
		if json.Unmarshal(tools, &ts) == nil {
			n += len(ts)
		}
	}
	for _, p := range pages {
		var text []byte
		switch v := p.(type) {
		case string:
			text = []byte(v)
		case map[string]any:
			b, _ := v["base64"].(string)
			text, _ = base64.StdEncoding.DecodeString(b)
		}
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(text, &page) == nil {
			n += len(page.Tools)
		}
	}
	if n <= s.cfg.MaxLockTools {
		return false
	}
	s.problem(w, http.StatusRequestEntityTooLarge, "too_many_tools",
		fmt.Sprintf("a lockfile pins at most %d tools; this one would pin %d", s.cfg.MaxLockTools, n))
	return true
}

// requestPages is a request's pages member as tooManyTools takes it.
func requestPages(raw json.RawMessage) []any {
	var pages []any
	json.Unmarshal(raw, &pages)
	return pages
}
