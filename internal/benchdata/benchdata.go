// Package benchdata builds the inputs every benchmark of the project uses, so
// that native Go, wazero and the C library are measured on the same bytes: a
// tools/list page of n realistic tools (about 1 KB each) and the
// continuity_check request comparing it with its own lockfile.
package benchdata

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/crawlcheck/verifier/core"
)

// Now is the check time of every benchmark request.
const Now = "2026-11-30T12:00:00Z"

// Tools returns n tool objects with descriptions, nested input schemas and
// annotations.
func Tools(n int) []map[string]any {
	ts := make([]map[string]any, n)
	for i := range ts {
		props := map[string]any{}
		for p := 0; p < 6; p++ {
			props[fmt.Sprintf("field_%d", p)] = map[string]any{
				"type":        []string{"string", "integer", "boolean"}[p%3],
				"description": fmt.Sprintf("Parameter %d of tool %d: what it means, its unit and its default.", p, i),
			}
		}
		props["options"] = map[string]any{"type": "object", "properties": map[string]any{
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000},
			"order": map[string]any{"enum": []string{"asc", "desc"}},
		}}
		ts[i] = map[string]any{
			"name":        fmt.Sprintf("tool_%05d", i),
			"description": fmt.Sprintf("Tool %d does one thing well. %s", i, strings.Repeat("It reads the input, checks it and answers. ", 4)),
			"inputSchema": map[string]any{"type": "object", "properties": props, "required": []string{"field_0"}},
			"annotations": map[string]any{"readOnlyHint": i%2 == 0, "title": fmt.Sprintf("Tool %d", i)},
		}
	}
	return ts
}

// Page is the tools/list result of Tools(n).
func Page(n int) []byte {
	b, err := json.Marshal(map[string]any{"tools": Tools(n)})
	if err != nil {
		panic(err)
	}
	return b
}

// Documents are Page(n) and the lockfile approving it, as the bytes a host
// holds: what it read from the server and from disk.
func Documents(n int) (page, lock []byte) {
	page = Page(n)
	var made struct {
		OK     bool
		Result struct{ Lock string }
	}
	mk, _ := json.Marshal(map[string]any{"pages": []string{string(page)}, "approved_at": "2026-11-01T00:00:00Z",
		"server": map[string]any{"url": Endpoint}})
	if err := json.Unmarshal(core.Call("make_lock", mk), &made); err != nil || !made.OK {
		panic("benchdata: make_lock failed")
	}
	return page, []byte(made.Result.Lock)
}

// Endpoint is the server of every benchmark request.
const Endpoint = "https://bench.example/mcp"

// ContinuityRequests are continuity_checks of Page(n) against its own
// lockfile, in enforce mode: the full path, record included; Unseen of
// them, the page respaced in each (Respaced), so that a benchmark cycling
// through them reads the page on every call.
func ContinuityRequests(n int) [][]byte {
	page, lock := Documents(n)
	out := make([][]byte, Unseen)
	for i := range out {
		req, err := json.Marshal(map[string]any{
			"now": Now, "mode": "enforce", "lock": string(lock),
			"observed": map[string]any{"endpoint": Endpoint, "pages": []string{string(Respaced(page, i))}},
		})
		if err != nil {
			panic(err)
		}
		out[i] = req
	}
	return out
}

// RawContinuityRequest is ContinuityRequest through ABI 2: the request names
// the page as attachment 0 and the lockfile as attachment 1 (docs/abi.md).
const RawContinuityRequest = `{"now":"` + Now + `","mode":"enforce","lock":{"$raw":1},"observed":{"endpoint":"` + Endpoint + `","pages":[{"$raw":0}]}}`

// Attachments frames documents for core.CallRaw: each a 4-byte
// little-endian length, then its bytes.
func Attachments(docs ...[]byte) []byte {
	var out []byte
	for _, d := range docs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(d)))
		out = append(out, d...)
	}
	return out
}

// Respaced is page followed by i spaces: the same list in other bytes. The
// core keeps the last few walks it read, by their exact bytes (the walk
// memo, core/internal/tools/memo.go), so a benchmark that hands it the same
// page again and again measures the memo, not a read of the page.
func Respaced(page []byte, i int) []byte {
	out := make([]byte, len(page)+i)
	copy(out, page)
	for k := len(page); k < len(out); k++ {
		out[k] = ' '
	}
	return out
}

// Unseen is how many respaced pages a benchmark cycles through to read its
// page on every call: more than the memos' window of sightings remembers
// (16, core/internal/canon/sightings.go), so that each call's page is one
// the core has not seen, which it reads without keeping. With fewer, a
// memo keeps some of them and hits on those (8 hit half the time).
const Unseen = 17

// UnseenAttachments are Attachments(page, lock) with the page respaced
// Unseen ways (Respaced), for a benchmark to cycle through: every call then
// reads and hashes its page, as a check of a page not seen before does.
func UnseenAttachments(page, lock []byte) [][]byte {
	out := make([][]byte, Unseen)
	for i := range out {
		out[i] = Attachments(Respaced(page, i), lock)
	}
	return out
}

// Cycle returns a function answering the next of xs each call, round and
// round.
func Cycle[T any](xs []T) func() T {
	i := 0
	return func() T {
		x := xs[i%len(xs)]
		i++
		return x
	}
}
