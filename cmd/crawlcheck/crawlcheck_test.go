package main

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/listening"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/rogpeppe/go-internal/testscript"
)

// The CLI is tested as a user types it: the scripts in testdata/*.txtar run
// the real command (this test binary re-executed as crawlcheck) against the
// real scenario server (hosttest/mcpserver, built once per test run).

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"crawlcheck": main})
}

func TestScripts(t *testing.T) {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir, "github.com/crawlcheck/verifier/hosttest/mcpserver", "github.com/crawlcheck/verifier/hosttest/issuer")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the scenario server and the test issuer: %v\n%s", err, out)
	}
	keys, err := filepath.Abs(filepath.Join("..", "..", "testdata", "keys"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("MCPSERVER", filepath.Join(dir, "mcpserver"))
			env.Setenv("ISSUER", filepath.Join(dir, "issuer"))
			env.Setenv("KEYS", keys)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve":   cmdServe,
			"issuer":  cmdIssuer,
			"knobs":   cmdKnobs,
			"mutate":  cmdMutate,
			"stdio":   cmdStdio,
			"downurl": cmdDownURL,
			"exits":   cmdExits,
			"expand":  cmdExpand,
			"edit":    cmdEdit,
			"bytes":   cmdBytes,
		},
	})
}

// serve [-env VAR] SCENARIO [ARGS...] starts the scenario server over HTTP in
// the background, sets $URL (or $VAR) to its endpoint, and stops it when
// the script ends.
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! serve")
	}
	name := "URL"
	if len(args) >= 2 && args[0] == "-env" {
		name, args = args[1], args[2:]
	}
	if len(args) < 1 {
		ts.Fatalf("usage: serve [-env VAR] SCENARIO [ARGS...]")
	}
	cmd := exec.Command(ts.Getenv("MCPSERVER"), append([]string{"--scenario", ts.MkAbs(args[0]), "--listen", "127.0.0.1:0"}, args[1:]...)...)
	ts.Setenv(name, background(ts, "the scenario server", cmd))
}

// background starts cmd, stops it when the script ends, and returns the URL
// it prints alone on its first line.
func background(ts *testscript.TestScript, what string, cmd *exec.Cmd) string {
	url, stop, err := listening.Start(cmd)
	if err != nil {
		ts.Fatalf("%s: %v", what, err)
	}
	ts.Defer(stop)
	return url
}

// issuer [-env VAR] [ARGS...] starts the test issuer (hosttest/issuer, with
// the test keys) in the background, sets $ISSUER_URL (or $VAR) to its base
// URL, and stops it when the script ends. ARGS are its flags: --now, knobs.
func cmdIssuer(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! issuer")
	}
	name := "ISSUER_URL"
	if len(args) >= 2 && args[0] == "-env" {
		name, args = args[1], args[2:]
	}
	cmd := exec.Command(ts.Getenv("ISSUER"), append([]string{"--listen", "127.0.0.1:0", "--keys", ts.Getenv("KEYS")}, args...)...)
	ts.Setenv(name, background(ts, "the test issuer", cmd))
}

// knobs URL JSON sets the test issuer's knobs while it runs ({} for an
// honest issuer).
func cmdKnobs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: knobs URL JSON")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(args[0]+"/admin/knobs", "application/json", strings.NewReader(args[1]))
	ts.Check(err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		ts.Fatalf("knobs %s: %s", args[1], resp.Status)
	}
}

// mutate URL [FILE] applies the server's next admin mutation, or the
// mutation object in FILE.
func cmdMutate(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: mutate URL [FILE]")
	}
	body := ""
	if len(args) == 2 {
		body = ts.ReadFile(args[1])
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(strings.TrimSuffix(args[0], "/mcp")+"/admin/mutate", "application/json", strings.NewReader(body))
	ts.Check(err)
	resp.Body.Close()
	if ok := resp.StatusCode == http.StatusOK; ok == neg {
		ts.Fatalf("admin mutate: %s", resp.Status)
	}
}

// stdio VAR SCENARIO [ARGS...] sets $VAR to the command line that starts
// the scenario server over stdio, for --server.
func cmdStdio(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: stdio VAR SCENARIO [ARGS...]")
	}
	argv := append([]string{ts.Getenv("MCPSERVER"), "--scenario", ts.MkAbs(args[1])}, args[2:]...)
	ep, err := preflight.StdioEndpoint(argv)
	ts.Check(err)
	ts.Setenv(args[0], strings.TrimPrefix(ep, "stdio:"))
}

// downurl VAR sets $VAR to an HTTP endpoint where nothing listens.
func cmdDownURL(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: downurl VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], "http://"+ln.Addr().String()+"/mcp")
	ln.Close()
}

// exits CODE PROG [ARGS...] runs PROG and fails unless it exits with CODE;
// its output is then matched by stdout and stderr as after exec.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// expand FILE... replaces $VAR and ${VAR} in each file with the script's
// environment (to write an MCP config naming a server's URL).
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	for _, f := range args {
		data := os.Expand(ts.ReadFile(f), ts.Getenv)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(data), 0o644))
	}
}

// edit FILE OLD NEW replaces the first OLD in FILE with NEW: tampering.
func cmdEdit(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: edit FILE OLD NEW")
	}
	data := ts.ReadFile(args[0])
	if !strings.Contains(data, args[1]) {
		ts.Fatalf("%s does not contain %q", args[0], args[1])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Replace(data, args[1], args[2], 1)), 0o644))
}

// bytes FILE TEXT writes TEXT to FILE with its Go escapes (\xff, \n)
// decoded: a file of bytes a text archive cannot hold, such as invalid
// UTF-8.
func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bytes FILE TEXT")
	}
	data, err := strconv.Unquote(`"` + strings.ReplaceAll(args[1], `"`, `\"`) + `"`)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(data), 0o644))
}
