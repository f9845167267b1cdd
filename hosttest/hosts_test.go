package hosttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/artifact"
	"github.com/crawlcheck/verifier/hosttest/chost"
	"github.com/crawlcheck/verifier/hosttest/gen"
	"github.com/crawlcheck/verifier/hosttest/rawreq"
	"github.com/crawlcheck/verifier/hosttest/wasmhost"
)

// release is the release build of the artifacts, built once by TestMain,
// with two wasm hosts — one giving the module Go's crypto/sha256 for its
// crawlcheck.sha256 import, one answering 0 so that it uses its own, as in a
// browser — and a C harness process on it.
var release struct {
	dir     string
	set     artifact.Set
	wasm    []byte
	host    *wasmhost.Host
	ownHash *wasmhost.Host
	c       *chost.Proc
}

// noHostSHA256 is the crawlcheck.sha256 of a host that has none.
func noHostSHA256([]byte) ([32]byte, bool) { return [32]byte{}, false }

func TestMain(m *testing.M) {
	code, err := runMain(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hosttest:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runMain(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "hosttest-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	release.dir = dir
	if release.set, err = artifact.Build(filepath.Join(dir, "release")); err != nil {
		return 0, err
	}
	if release.wasm, err = os.ReadFile(release.set.WASM); err != nil {
		return 0, err
	}
	ctx := context.Background()
	if release.host, err = wasmhost.New(ctx, release.wasm, wasmhost.Config{}); err != nil {
		return 0, err
	}
	defer release.host.Close(ctx)
	if release.ownHash, err = wasmhost.New(ctx, release.wasm, wasmhost.Config{SHA256: noHostSHA256}); err != nil {
		return 0, err
	}
	defer release.ownHash.Close(ctx)
	if release.c, err = chost.Start(release.set.Harness, release.set.Lib); err != nil {
		return 0, err
	}
	code := m.Run()
	if err := release.c.Close(); err != nil {
		return 0, err
	}
	return code, nil
}

// tagged builds the artifacts with the crawlcheck_testpanic tag, once.
var tagged = sync.OnceValues(func() (artifact.Set, error) {
	return artifact.Build(filepath.Join(release.dir, "testpanic"), "crawlcheck_testpanic")
})

// call is one request for all three builds.
type call struct {
	name string // for messages
	op   string
	req  []byte
}

// answers holds what each build said: through ABI 1 (call), and through
// ABI 2 (call_raw) with every document the request holds as a string moved
// into an attachment (rawreq.Split). The wasm module answers through ABI 1
// with the host's SHA-256 and through ABI 2 with both the host's and its own.
type answers struct {
	native, wasm, c          []byte
	nativeRaw, wasmRaw, cRaw []byte
	wasmOwnHash              []byte
}

// ask sends calls to the three builds, each through both ABIs: native
// in-process, wasm on the pooled hosts, the C library through the harness
// in one batch.
func ask(t testing.TB, calls []call) []answers {
	t.Helper()
	out := make([]answers, len(calls))
	reqs := requests(calls)
	for _, c := range calls {
		r, a := split(c.req)
		reqs = append(reqs, chost.Request{Op: c.op, Body: r, Attachments: a})
	}
	var cerr error
	var cResps [][]byte
	var wg sync.WaitGroup
	wg.Go(func() { cResps, cerr = release.c.CallAll(reqs) })
	ctx := context.Background()
	for i, c := range calls {
		r, a := split(c.req)
		out[i].native = core.Call(c.op, c.req)
		out[i].nativeRaw = core.CallRaw(c.op, r, a)
		var err error
		if out[i].wasm, err = release.host.Call(ctx, c.op, c.req); err != nil {
			t.Fatalf("%s: wasm: %v", c.name, err)
		}
		if out[i].wasmRaw, err = release.host.CallRaw(ctx, c.op, r, a); err != nil {
			t.Fatalf("%s: wasm call_raw: %v", c.name, err)
		}
		if out[i].wasmOwnHash, err = release.ownHash.CallRaw(ctx, c.op, r, a); err != nil {
			t.Fatalf("%s: wasm call_raw, the module's own SHA-256: %v", c.name, err)
		}
	}
	wg.Wait()
	if cerr != nil {
		t.Fatalf("C harness: %v", cerr)
	}
	for i := range out {
		out[i].c, out[i].cRaw = cResps[i], cResps[len(calls)+i]
	}
	return out
}

// split is rawreq.Split with attachments never nil, so that the raw path is
// taken also for a request without documents.
func split(request []byte) (req, attachments []byte) {
	req, attachments = rawreq.Split(request)
	if attachments == nil {
		attachments = []byte{}
	}
	return req, attachments
}

// each lists a call's answers by where they came from.
func (a answers) each() []struct {
	host string
	resp []byte
} {
	return []struct {
		host string
		resp []byte
	}{
		{"native", a.native}, {"wasm", a.wasm}, {"C", a.c},
		{"native CallRaw", a.nativeRaw}, {"wasm call_raw", a.wasmRaw}, {"C call_raw", a.cRaw},
		{"wasm call_raw with the module's own SHA-256", a.wasmOwnHash},
	}
}

// same reports how the builds disagree with each other, "" if they do not.
func (a answers) same() string {
	var msg string
	for _, h := range a.each()[1:] {
		if !bytes.Equal(h.resp, a.native) {
			msg += fmt.Sprintf("\n  native: %s\n  %s: %s", clip(a.native), h.host, clip(h.resp))
		}
	}
	return msg
}

func clip(b []byte) string {
	if len(b) > 400 {
		return fmt.Sprintf("%q… (%d bytes)", b[:400], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// listedOps are the ops the core's version result lists.
func listedOps(t testing.TB) []string {
	t.Helper()
	var env struct {
		OK     bool `json:"ok"`
		Result struct {
			Ops []string `json:"ops"`
		} `json:"result"`
	}
	resp := core.Call("version", []byte("{}"))
	if err := json.Unmarshal(resp, &env); err != nil || !env.OK {
		t.Fatalf("version: %s (%v)", resp, err)
	}
	return env.Result.Ops
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// envelopeCode is "ok" or the error code of a response.
func envelopeCode(resp []byte) string {
	var env struct {
		OK    bool `json:"ok"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &env); err != nil {
		return "not JSON"
	}
	if env.OK {
		return "ok"
	}
	return env.Error.Code
}

// newGen is a generator for the ops the core lists, with the test keys and
// key directory of testdata/keys when they exist.
func newGen(t testing.TB) *gen.Gen {
	t.Helper()
	g := gen.New(listedOps(t), core.Call)
	if dir, err := os.ReadFile("../testdata/keys/test-directory.json"); err == nil {
		g.Directory = string(dir)
	}
	files, _ := filepath.Glob("../testdata/keys/test-*.json")
	for _, f := range files {
		var k struct{ Kid, Seed string }
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if k.Seed != "" {
			g.Keys = append(g.Keys, gen.Key{ID: k.Kid, Seed: k.Seed})
		}
	}
	return g
}
