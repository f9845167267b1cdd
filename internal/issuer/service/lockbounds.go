package service

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/crawlcheck/verifier/internal/jsonframe"
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
// {"base64": …}). The tools are counted by their commas, not decoded, and
// the count stops past the bound: refusing 40,000 tools costs a scan of
// the first thousand, where decoding them all was most of the refusal's
// CPU. Whether what was counted is well-formed is make_lock's to judge.
func (s *Service) tooManyTools(w http.ResponseWriter, tools json.RawMessage, pages []any) bool {
	bound := s.cfg.MaxLockTools
	n := elements(tools, bound)
	for _, p := range pages {
		if n > bound {
			break
		}
		var text []byte
		switch v := p.(type) {
		case string:
			text = []byte(v)
		case map[string]any:
			b, _ := v["base64"].(string)
			text, _ = base64.StdEncoding.DecodeString(b)
		}
		if m, ok := jsonframe.Members(text); ok {
			n += elements(m["tools"], bound-n)
		}
	}
	if n <= bound {
		return false
	}
	s.problem(w, http.StatusRequestEntityTooLarge, "too_many_tools",
		fmt.Sprintf("a lockfile pins at most %d tools; this one would pin more", bound))
	return true
}

// elements counts the elements of a JSON array, stopping once past stop
// (the count answered is then stop+1); 0 for anything but an array.
func elements(b []byte, stop int) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	if i >= len(b) || b[i] != '[' {
		return 0
	}
	n, depth, inString, escaped, empty := 0, 0, false, false, true
	for _, c := range b[i:] {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth == 1 {
				continue
			}
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				if !empty {
					n++
				}
				return n
			}
		case c == ',' && depth == 1:
			if n++; n > stop {
				return n
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		empty = false
	}
	return n
}

// requestPages is a request's pages member as tooManyTools takes it.
func requestPages(raw json.RawMessage) []any {
	var pages []any
	json.Unmarshal(raw, &pages)
	return pages
}
