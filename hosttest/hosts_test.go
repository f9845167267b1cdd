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
	"github.com/crawlcheck/verifier/hosttest/wasmhost"
)

// release is the release build of the artifacts, built once by TestMain,
// with a wasm host and a C harness process on it.
var release struct {
	dir  string
	set  artifact.Set
	wasm []byte
	host *wasmhost.Host
	c    *chost.Proc
}

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

// answers holds what each build said.
type answers struct{ native, wasm, c []byte }

// ask sends calls to the three builds: native in-process, wasm on the
// pooled host, the C library through the harness in one batch.
func ask(t testing.TB, calls []call) []answers {
	t.Helper()
	out := make([]answers, len(calls))
	reqs := requests(calls)
	var cerr error
	var cResps [][]byte
	var wg sync.WaitGroup
	wg.Go(func() { cResps, cerr = release.c.CallAll(reqs) })
	for i, c := range calls {
		out[i].native = core.Call(c.op, c.req)
		resp, err := release.host.Call(context.Background(), c.op, c.req)
		if err != nil {
			t.Fatalf("%s: wasm: %v", c.name, err)
		}
		out[i].wasm = resp
	}
	wg.Wait()
	if cerr != nil {
		t.Fatalf("C harness: %v", cerr)
	}
	for i := range out {
		out[i].c = cResps[i]
	}
	return out
}

// same reports how the builds disagree with each other, "" if they do not.
func (a answers) same() string {
	var msg string
	if !bytes.Equal(a.wasm, a.native) {
		msg += fmt.Sprintf("\n  native: %s\n  wasm:   %s", clip(a.native), clip(a.wasm))
	}
	if !bytes.Equal(a.c, a.native) {
		msg += fmt.Sprintf("\n  native: %s\n  C:      %s", clip(a.native), clip(a.c))
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
