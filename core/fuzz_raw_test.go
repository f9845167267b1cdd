package core_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// FuzzCallRawPages: pages sent as attachments (ABI 2) get exactly the
// answer the same bytes get as {"base64": …} pages through Call, whatever
// the bytes, so every property FuzzLockCheckPages holds for Call holds for
// CallRaw too.
func FuzzCallRawPages(f *testing.F) {
	lock := fuzzLock(f)
	for _, s := range fuzzSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p1, p2 string) {
		pages := pagesOf(p1, p2)
		want := core.Call("lock_check", fuzzRequest(t, map[string]any{"lock": lock, "pages": rawPages(pages)}))
		refs := `{"$raw":1}`
		att := frame(nil, lock)
		att = frame(att, p1)
		if len(pages) == 2 {
			refs += `,{"$raw":2}`
			att = frame(att, p2)
		}
		got := core.CallRaw("lock_check", []byte(`{"lock":{"$raw":0},"pages":[`+refs+`]}`), att)
		if !bytes.Equal(got, want) {
			t.Fatalf("pages %q:\n  CallRaw %s\n  Call    %s", pages, got, want)
		}
	})
}

// FuzzCallRawFraming: any request with any attachment bytes gets a
// canonical envelope and never an internal error.
func FuzzCallRawFraming(f *testing.F) {
	f.Add(`{"json":{"$raw":0}}`, frame(nil, "[1,2]"))
	f.Add(`{"json":{"$raw":1}}`, []byte{1, 0, 0})
	f.Add(`{"pages":[{"$raw":0},{"$raw":0}]}`, frame(nil, `{"tools":[]}`))
	f.Add(`{"json":{"$raw":0},"x":{"$raw":"0"}}`, []byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, req string, att []byte) {
		for _, op := range []string{"canonicalize", "hash_tools", "verify_record"} {
			resp := core.CallRaw(op, []byte(req), att)
			if _, _, code := envelope(t, resp); code == "internal" {
				t.Fatalf("%s %q %q: %s", op, req, att, resp)
			}
		}
	})
}

// frame appends doc to attachments as one frame.
func frame(att []byte, doc string) []byte {
	att = binary.LittleEndian.AppendUint32(att, uint32(len(doc)))
	return append(att, doc...)
}
