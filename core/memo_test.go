package core_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// TestVectorsTwice: every op vector asked three times in one process, the
// second round in reverse order, gives its envelope each time. The core keeps
// state between calls (the lockfile cache, the long-string memo, the walk
// memo of tools/list pages, the container memo): the first rounds fill it
// (a memo keeps what it reads often), the last answers from it
// where the same bytes come again (a hit; next_page's pages are read
// as walks first, so that it answers them from the memo), and a hit must
// give exactly what reading the bytes gave (a miss).
func TestVectorsTwice(t *testing.T) {
	vs := opCalls(t)
	back := slices.Clone(vs)
	slices.Reverse(back)
	for round, order := range [][]opCall{vs, back, vs} {
		for _, v := range order {
			// next_page answers a page of a walk the core read from the walk
			// memo: after the first round, its page is read as a walk first,
			// 9 times in a row (a walk read so, half the sightings' window
			// and one, is kept whatever the memo holds).
			var r struct{ Page *string }
			if round > 0 && v.op == "next_page" && json.Unmarshal(v.req, &r) == nil && r.Page != nil {
				for range 9 {
					core.Call("hash_tools", mustJSON(t, map[string]any{"pages": []string{*r.Page}}))
				}
			}
			if got := core.Call(v.op, v.req); !bytes.Equal(got, v.want) {
				t.Errorf("round %d, %s:\n got  %s\n want %s", round+1, v.name, got, v.want)
			}
		}
	}
}
