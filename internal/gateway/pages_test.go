package gateway_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestPagedRecordAsCheck: the gateway walks tools/list on the session
// engine's executor as crawlcheck check does (preflight.Walk), so a server
// that pages, or pages badly (a cursor that repeats, an empty, null or
// non-string nextCursor, a page that repeats a key), gives
// the gateway's first record byte for byte the check's. Each case also
// asserts what the walk ended with, so that a scenario the server ignored
// (one page read, nothing to tell the walks apart) fails here. A page
// that is no JSON reaches the core as the whole frame, which holds the
// request id each host chose (the gateway's is longer): the core locates
// its error in the frame's result, so the records' error fields (asserted
// too) are the same bytes.
func TestPagedRecordAsCheck(t *testing.T) {
	const now = "2026-12-01T12:00:00Z"
	e := newEnv(t, threeTools)
	var tools []json.RawMessage
	if err := json.Unmarshal([]byte(threeTools), &tools); err != nil {
		t.Fatal(err)
	}
	page := func(i int, rest string) string { return `{"tools":[` + string(tools[i]) + `]` + rest + `}` }
	for _, c := range []struct {
		name      string
		knobs     map[string]any
		pages     int
		truncated string // observed.truncation ("" none)
		malformed bool
		err       string // the observation's detail.error ("" not asserted)
	}{
		{"three pages", map[string]any{}, 3, "", false, ""},
		{"a cursor that repeats", map[string]any{"cursor": "stuck"}, 2, "cursor_repeated", false, ""},
		{"an empty cursor", map[string]any{"cursor": "empty"}, 1, "", true, ""},
		{"a null nextCursor ends the list", map[string]any{"pages_raw": map[string]string{"1": page(0, `,"nextCursor":null`)}}, 1, "", false, ""},
		{"a cursor that is a number", map[string]any{"pages_raw": map[string]string{"2": page(1, `,"nextCursor":5`)}}, 2, "", true, ""},
		{"a page that repeats a key", map[string]any{"pages_raw": map[string]string{"2": page(1, `,"tools":[],"nextCursor":"cursor-3"`)}}, 2, "", true, ""},
		{"a page that is no JSON", map[string]any{"pages_raw": map[string]string{"2": `{not json`}}, 2, "", true, `page 2: expected a member name, found "n" at offset 1 of its result (json_syntax)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := map[string]any{"server": map[string]string{"name": "shop", "version": "1"}, "tools": tools, "page_size": 1}
			for k, v := range c.knobs {
				sc[k] = v
			}
			b, _ := json.Marshal(sc)
			if err := os.WriteFile(e.scenario, b, 0o644); err != nil {
				t.Fatal(err)
			}
			got, want := firstRecordAndCheck(t, e.lock, e.log, e.server, now, "initialize", "2025-11-25", "--mode", "observe")
			if !bytes.Equal(got, want) {
				t.Errorf("the gateway's first record:\n%s\ncrawlcheck check --json:\n%s", got, want)
			}
			var rec struct {
				Observations []struct {
					Detail struct {
						Error string `json:"error"`
					} `json:"detail"`
				} `json:"observations"`
				Observed struct {
					Pages      int     `json:"pages"`
					Truncation *string `json:"truncation"`
					Malformed  bool    `json:"malformed"`
				} `json:"observed"`
			}
			if err := json.Unmarshal(got, &rec); err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			o := rec.Observed
			trunc := ""
			if o.Truncation != nil {
				trunc = *o.Truncation
			}
			if o.Pages != c.pages || trunc != c.truncated || o.Malformed != c.malformed {
				t.Errorf("observed pages %d, truncation %q, malformed %v; want %d, %q, %v:\n%s", o.Pages, trunc, o.Malformed, c.pages, c.truncated, c.malformed, got)
			}
			if c.err != "" && (len(rec.Observations) != 1 || rec.Observations[0].Detail.Error != c.err) {
				t.Errorf("observations %+v; want one whose detail.error is %q", rec.Observations, c.err)
			}
		})
	}
}
