package tlog_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/crawlcheck/verifier/core/merkle"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
	"github.com/crawlcheck/verifier/internal/issuer/tlog/tlogtest"
)

const repo = "../../.."

func newLog(t *testing.T) (*tlogtest.Mem, *tlog.Log) {
	st := &tlogtest.Mem{}
	k := tlogtest.Key(t, repo)
	return st, tlog.New(st, tlogtest.Issuer, func() ed25519.PrivateKey { return k })
}

func entry(i int) []byte {
	return []byte(`{"kind":"crawlcheck-log-entry","n":` + strconv.Itoa(i) + `}`)
}

// TestProofsVerifyInTheCore appends entries one by one: each append's proof
// verifies in the core (an independent coding of RFC 6962 verification),
// against a kept checkpoint too, and at several sizes every entry and every
// checkpoint a client kept still verify.
func TestProofsVerifyInTheCore(t *testing.T) {
	st, l := newLog(t)
	dir := tlogtest.Directory(t, repo)
	ctx := context.Background()
	var kept []string
	for i := range 70 {
		proof, err := l.Append(ctx, entry(i))
		if err != nil {
			t.Fatal(err)
		}
		var prev string
		var cons []tlog.Hash
		if len(kept) > 0 {
			prev = kept[len(kept)/2]
			m, _ := tlog.ParseCheckpointSize(prev)
			if cons, _, err = l.Consistency(ctx, m, 0); err != nil {
				t.Fatal(err)
			}
		}
		if v := tlogtest.VerifyEntry(t, dir, entry(i), proof, prev, cons); !v.Valid {
			t.Fatalf("append %d: %v %v", i, *v.Reason, *v.Detail)
		}
		if v := tlogtest.VerifyEntry(t, dir, entry(i+1), proof, "", nil); v.Valid {
			t.Fatalf("append %d: the proof proves another entry", i)
		}
		cp, _ := st.LogCheckpoint(ctx)
		kept = append(kept, cp)
		if i == 9 || i == 33 || i == 69 {
			if n := tlogtest.Audit(t, dir, st, l, kept); n != uint64(i+1) {
				t.Fatalf("audit at %d saw %d entries", i+1, n)
			}
		}
	}
}

func get(t *testing.T, srv *httptest.Server, path string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestTiles serves a log of 300 entries as C2SP tlog-tiles: full and
// partial hash tiles of levels 0 and 1, entry bundles, immutable caching,
// and nothing past the checkpoint or under another spelling.
func TestTiles(t *testing.T) {
	st, l := newLog(t)
	ctx := context.Background()
	for i := range 300 {
		if _, err := l.Append(ctx, entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(l)
	defer srv.Close()

	code, h, body := get(t, srv, "/log/checkpoint")
	cp, _ := st.LogCheckpoint(ctx)
	if code != 200 || string(body) != cp || h.Get("Cache-Control") != "no-cache" {
		t.Fatalf("checkpoint: %d %q %v", code, body, h)
	}
	var leaves []byte
	for i := range 300 {
		lh := merkle.LeafHash(entry(i))
		leaves = append(leaves, lh[:]...)
	}
	for _, c := range []struct {
		path string
		want []byte
	}{
		{"/log/tile/0/000", leaves[:256*32]},
		{"/log/tile/0/001.p/44", leaves[256*32:]},
		{"/log/tile/0/001.p/10", leaves[256*32 : 266*32]},
	} {
		code, h, body := get(t, srv, c.path)
		if code != 200 || !bytes.Equal(body, c.want) || h.Get("Cache-Control") != tlog.Immutable {
			t.Errorf("%s: %d, %d bytes, %q", c.path, code, len(body), h.Get("Cache-Control"))
		}
	}
	first, err := st.Hash(ctx, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := get(t, srv, "/log/tile/1/000.p/1"); code != 200 || !bytes.Equal(body, first[:]) {
		t.Errorf("level 1 tile: %d %x", code, body)
	}
	code, _, body = get(t, srv, "/log/tile/entries/001.p/44")
	var got [][]byte
	for len(body) >= 2 {
		n := int(binary.BigEndian.Uint16(body))
		got, body = append(got, body[2:2+n]), body[2+n:]
	}
	if code != 200 || len(got) != 44 || !bytes.Equal(got[0], entry(256)) || !bytes.Equal(got[43], entry(299)) {
		t.Errorf("entry bundle: %d, %d entries", code, len(got))
	}
	for _, p := range []string{
		"/log/tile/0/001",       // not full yet
		"/log/tile/0/001.p/45",  // past the checkpoint
		"/log/tile/1/000",       // level 1 holds one node
		"/log/tile/0/1",         // not three digits
		"/log/tile/0/x000/000",  // a leading zero group
		"/log/tile/8/000",       // no such level
		"/log/tile/0/000.p/256", // a partial tile is narrower than 256
		"/log/tile/0/000.p/0",
		"/log/tile/entries/002.p/1",
		"/log/other",
		// Indices whose first entry is past 2^64 (issue 37, F15): 2^56
		// times 256 wrapped to tile 0 and was served immutable.
		"/log/tile/0/x072/x057/x594/x037/x927/936",
		"/log/tile/entries/x072/x057/x594/x037/x927/936",
		"/log/tile/0/x072/x057/x594/x037/x927/936.p/44",
		"/log/tile/1/x072/x057/x594/x037/x927/936.p/1",
	} {
		if code, _, _ := get(t, srv, p); code != 404 {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
	if tlog.TilePath(0, 1234067, 256) != "/log/tile/0/x001/x234/067" || tlog.TilePath(-1, 5, 3) != "/log/tile/entries/005.p/3" {
		t.Errorf("TilePath: %s %s", tlog.TilePath(0, 1234067, 256), tlog.TilePath(-1, 5, 3))
	}
}

// countingStore counts the nodes read from the store.
type countingStore struct {
	*tlogtest.Mem
	reads int
}

func (c *countingStore) Hash(ctx context.Context, level int, index uint64) (tlog.Hash, error) {
	c.reads++
	return c.Mem.Hash(ctx, level, index)
}

// TestAppendedKeepsTheNewNodes: after batches appended as the issuer's
// committer appends them (the store's LogAppend, then Appended), every
// entry's proof is read from memory, not the store, and verifies in the
// core; without Appended the proofs read the store.
func TestAppendedKeepsTheNewNodes(t *testing.T) {
	for _, keep := range []bool{true, false} {
		st := &countingStore{Mem: &tlogtest.Mem{}}
		k := tlogtest.Key(t, repo)
		l := tlog.New(st, tlogtest.Issuer, func() ed25519.PrivateKey { return k })
		dir := tlogtest.Directory(t, repo)
		ctx := context.Background()
		n := 0
		for _, size := range []int{1, 5, 16, 3, 7} {
			var batch [][]byte
			for range size {
				batch = append(batch, entry(n))
				n++
			}
			first, cp, err := st.LogAppend(ctx, batch, l.Sign)
			if err != nil {
				t.Fatal(err)
			}
			if keep {
				l.Appended(ctx, first, batch)
			}
			st.reads = 0
			for i, e := range batch {
				proof, err := l.ProofFor(ctx, first+uint64(i), cp)
				if err != nil {
					t.Fatal(err)
				}
				if v := tlogtest.VerifyEntry(t, dir, e, proof, "", nil); !v.Valid {
					t.Fatalf("entry %d: %v %v", first+uint64(i), *v.Reason, *v.Detail)
				}
			}
			if keep && st.reads != 0 {
				t.Fatalf("batch of %d: %d nodes read from the store after Appended", size, st.reads)
			}
			if !keep && size > 1 && st.reads == 0 {
				t.Fatalf("batch of %d: no node read from the store without Appended", size)
			}
		}
	}
}
