package clientconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// fixtures are a config file of each client (testdata/, with comments
// where the format allows them), and how each entry reads: name, then the
// command line or remote URL, then what is disabled.
var fixtures = []struct {
	client, path string
	want         []string
}{
	{"claude-desktop", "claude_desktop_config.json", []string{
		`memory: npx -y @modelcontextprotocol/server-memory env[MEMORY_FILE_PATH=${HOME}/memory.json]`,
		`bare: /opt/bin/bare-mcp`,
		`remote: url https://mcp.example.com/mcp`,
	}},
	{"claude-code", ".mcp.json", []string{
		`github: ${GH_MCP:-npx} -y @acme/github-mcp --token=${GITHUB_TOKEN}`,
		`docs: url https://${DOCS_HOST:-docs.example.com}/mcp headers[Authorization=Bearer ${DOCS_TOKEN}]`,
	}},
	{"claude-code", ".claude.json", []string{
		`fs: npx -y @modelcontextprotocol/server-filesystem /tmp`,
		`/home/ann/shop#fs: uvx shop-mcp env[SHOP=1]`,
	}},
	{"cursor", ".cursor/mcp.json", []string{
		`db: ${workspaceFolder}/bin/db-mcp --dsn ${env:DB_DSN}`,
		`web: url https://web.example.com/mcp headers[X-Key=${env:WEB_KEY}]`,
	}},
	{"vscode", ".vscode/mcp.json", []string{
		`issues: npx -y @acme/issues-mcp@1.4.0 env[API_KEY=${input:api-key} HOME_DIR=${userHome}]`,
		`clock: clock-mcp`,
		`remote: sse https://sse.example.com/sse`,
	}},
	{"windsurf", "mcp_config.json", []string{
		`notes: node ${env:NOTES_DIR}/server.js`,
		`old: old-mcp (disabled: disabled: true)`,
		`hosted: url https://hosted.example.com/mcp headers[Authorization=Bearer ${env:HOSTED_TOKEN}]`,
	}},
	{"codex", ".codex/config.toml", []string{
		`docs: npx -y @acme/docs-mcp env[DOCS_LANG=en EXTRA=1]`,
		`time server: time-mcp`,
		`off: off-mcp (disabled: enabled = false)`,
		`remote: url https://remote.example.com/mcp bearer[REMOTE_TOKEN]`,
		`tracker: url https://tracker.example.com/mcp headers[X-Team=crawl X-Region=eu] env_headers[X-Api-Key=TRACKER_KEY]`,
	}},
	{"gemini", ".gemini/settings.json", []string{
		`py: python -m py_mcp --root $PROJECT_ROOT env[API_TOKEN=${PY_TOKEN}] cwd ./tools`,
		`legacy: legacy-mcp (disabled: listed in mcp.excluded)`,
		`stream: url https://stream.example.com/mcp headers[X-Key=$STREAM_KEY]`,
		`events: sse https://events.example.com/sse`,
	}},
	{"zed", "zed/settings.json", []string{
		`kagi: uvx kagimcp env[KAGI_API_KEY=k]`,
		`nested: /usr/local/bin/nested-mcp --stdio`,
		`paused: paused-mcp (disabled: enabled: false)`,
		`github:  (unsupported: source: "extension")`,
	}},
	{"continue", ".continue/config.yaml", []string{
		`SQLite: npx -y mcp-sqlite ${{ secrets.DB_PATH }} env[LOG=debug]`,
		`Browser: browser-mcp`,
		`Flow: flow-mcp --flow yes`,
		`Remote: url https://remote.example.com/mcp headers[X-Team=crawl]`,
		`Events: sse https://events.example.com/sse`,
	}},
	{"continue", ".continue/mcpServers/playwright.yaml", []string{
		`Browser search: npx @playwright/mcp@latest`,
	}},
	{"cline", "cline_mcp_settings.json", []string{
		`weather: node /home/ann/weather/build/index.js env[KEY=w]`,
		`sleepy: sleepy-mcp --x (disabled: disabled: true)`,
		`hosted: url https://hosted.example.com/mcp`,
	}},
}

func describe(e *Entry) string {
	var b strings.Builder
	b.WriteString(e.Name + ": ")
	switch {
	case e.URL != "" && e.SSE:
		b.WriteString("sse " + e.URL)
	case e.URL != "":
		b.WriteString("url " + e.URL)
	default:
		b.WriteString(strings.Join(append([]string{e.Command}, e.Args...), " "))
	}
	kvs := func(name string, kv []KV) {
		if len(kv) == 0 {
			return
		}
		var parts []string
		for _, p := range kv {
			parts = append(parts, p.Key+"="+p.Value)
		}
		fmt.Fprintf(&b, " %s[%s]", name, strings.Join(parts, " "))
	}
	kvs("env", e.Env)
	kvs("headers", e.Headers)
	kvs("env_headers", e.EnvHeaders)
	if e.BearerEnv != "" {
		b.WriteString(" bearer[" + e.BearerEnv + "]")
	}
	if e.Cwd != "" {
		b.WriteString(" cwd " + e.Cwd)
	}
	if e.Disabled != "" {
		b.WriteString(" (disabled: " + e.Disabled + ")")
	}
	if e.Unsupported != nil {
		b.WriteString(" (unsupported: " + strings.Join(e.Unsupported, ", ") + ")")
	}
	return b.String()
}

func readFixture(t *testing.T, client, path string) *File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(Clients[client], path, data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReadEachClient(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.path, func(t *testing.T) {
			f := readFixture(t, fx.client, fx.path)
			var got []string
			for _, e := range f.Entries {
				got = append(got, describe(e))
			}
			if !slices.Equal(got, fx.want) {
				t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(fx.want, "\n"))
			}
		})
	}
}

// TestWrapThenUnwrapGivesBackTheFile installs the gateway into every
// entry of every fixture it can start, checks the client reads the
// gateway's command line with the server's after "--" (or, for a remote
// server of a JSON config, run --url with its URL and headers) and every
// other member as it was, and uninstalls: the original bytes come back
// exactly, the lines a TOML remote entry had commented out included.
func TestWrapThenUnwrapGivesBackTheFile(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.path, func(t *testing.T) {
			orig := readFixture(t, fx.client, fx.path)
			f := orig
			saved := map[string]*Saved{}
			for _, e := range orig.Entries {
				if !e.Stdio() && e.URL == "" {
					continue
				}
				g := Gateway{Binary: `/opt/crawl check/crawlcheck`, Lock: "/cfg/crawlcheck/" + StemOf(e.Name) + ".lock.json", Log: "/cfg/crawlcheck/x.log.jsonl"}
				data, s, err := f.Wrap(e.Name, g)
				if err != nil {
					t.Fatalf("wrap %s: %v", e.Name, err)
				}
				saved[e.Name] = s
				if f, err = Read(f.Client, f.Path, data); err != nil {
					t.Fatalf("the wrapped file does not read: %v\n%s", err, data)
				}
				w := f.entry(e.Name)
				argv, lock, ok := Wrapped(w)
				if e.URL != "" {
					wantArgs := g.RemoteArgs(e.URL, e.SSE, f.Client.RemoteFlags(e))
					if !ok || !w.Stdio() || w.Command != g.Binary || lock != g.Lock || argv != nil || !slices.Equal(w.Args, wantArgs) {
						t.Fatalf("wrapped remote %s reads %q %q\n%s", e.Name, w.Command, w.Args, data)
					}
				} else if !ok || w.Command != g.Binary || lock != g.Lock || !slices.Equal(argv, append([]string{e.Command}, e.Args...)) {
					t.Fatalf("wrapped %s reads %q %q\n%s", e.Name, w.Command, w.Args, data)
				}
				if describe(Unwrapped(w)) != describe(e) {
					t.Errorf("wrapped %s lost a member: %s, was %s", e.Name, describe(Unwrapped(w)), describe(e))
				}
			}
			if len(saved) == 0 {
				t.Fatal("no stdio entry")
			}
			// Every comment is still there while installed, those inside
			// an args list included ("//" after a URL's scheme is none).
			for _, at := range comment.FindAllStringIndex(string(orig.Data), -1) {
				c := string(orig.Data[at[0]:at[1]])
				if at[0] > 0 && orig.Data[at[0]-1] == ':' {
					continue
				}
				if !strings.Contains(string(f.Data), c) {
					t.Errorf("the comment %q is gone from the installed file:\n%s", c, f.Data)
				}
			}
			for _, e := range orig.Entries {
				if s := saved[e.Name]; s != nil {
					data, err := f.Unwrap(e.Name, s)
					if err != nil {
						t.Fatalf("unwrap %s: %v", e.Name, err)
					}
					if f, err = Read(f.Client, f.Path, data); err != nil {
						t.Fatal(err)
					}
				}
			}
			if string(f.Data) != string(orig.Data) {
				t.Errorf("uninstall did not give back the file:\n%s\nwant:\n%s", f.Data, orig.Data)
			}
		})
	}
}

var comment = regexp.MustCompile(`//[^\n]*|/\*.*?\*/|# [^\n]*`)

func TestUnwrapRefusesAnEditedEntry(t *testing.T) {
	f := readFixture(t, "vscode", ".vscode/mcp.json")
	data, s, err := f.Wrap("issues", Gateway{Binary: "/bin/crawlcheck", Lock: "l", Log: "g"})
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"--log"`, `"--log", "--x"`, 1)
	f2, err := Read(f.Client, f.Path, []byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f2.Unwrap("issues", s); err == nil || !strings.Contains(err.Error(), "edited since install") {
		t.Fatalf("unwrap of an edited entry: %v", err)
	}
}

func TestExpandAsEachClientDoes(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "gh", "DB_DSN": "pg://x", "NOTES_DIR": "/n", "PY_TOKEN": "pt", "PROJECT_ROOT": "/p", "WEB_KEY": "wk", "REMOTE_TOKEN": "rt", "TRACKER_KEY": "tk"}
	ctx := Context{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Home: "/home/ann", Workspace: "/w/proj"}
	cases := []struct {
		client, path, server string
		want                 string
		refused              []string
	}{
		{"claude-code", ".mcp.json", "github", "npx -y @acme/github-mcp --token=gh", nil},
		{"claude-code", ".mcp.json", "docs", "https://docs.example.com/mcp Authorization=Bearer ${DOCS_TOKEN}", []string{"${DOCS_TOKEN} (the variable is not set and has no default)"}},
		{"cursor", ".cursor/mcp.json", "db", "/w/proj/bin/db-mcp --dsn pg://x", nil},
		{"cursor", ".cursor/mcp.json", "web", "https://web.example.com/mcp X-Key=wk", nil},
		{"vscode", ".vscode/mcp.json", "issues", "npx -y @acme/issues-mcp@1.4.0 API_KEY=${input:api-key} HOME_DIR=/home/ann", []string{"${input:api-key} (VS Code prompts for it, \"The API key\" when it starts the server: a check cannot answer)"}},
		{"windsurf", "mcp_config.json", "notes", "node /n/server.js", nil},
		{"windsurf", "mcp_config.json", "hosted", "https://hosted.example.com/mcp Authorization=Bearer ${env:HOSTED_TOKEN}", []string{"${env:HOSTED_TOKEN} (the variable is not set)"}},
		{"gemini", ".gemini/settings.json", "py", "python -m py_mcp --root /p API_TOKEN=pt", nil},
		{"codex", ".codex/config.toml", "remote", "https://remote.example.com/mcp Authorization=Bearer rt", nil},
		{"codex", ".codex/config.toml", "tracker", "https://tracker.example.com/mcp X-Team=crawl X-Region=eu X-Api-Key=tk", nil},
		{"continue", ".continue/config.yaml", "SQLite", "npx -y mcp-sqlite ${{ secrets.DB_PATH }} LOG=debug", []string{"${{ secrets.DB_PATH }} (Continue fills it from its secrets or inputs: a check cannot read them)"}},
		{"claude-desktop", "claude_desktop_config.json", "memory", "npx -y @modelcontextprotocol/server-memory MEMORY_FILE_PATH=${HOME}/memory.json", nil},
	}
	for _, c := range cases {
		f := readFixture(t, c.client, c.path)
		tg, refused := f.Expand(f.entry(c.server), ctx)
		got := tg.URL
		if got == "" {
			got = strings.Join(append([]string{tg.Command}, tg.Args...), " ")
		}
		for _, kv := range append(tg.Env, tg.Headers...) {
			got += " " + kv.Key + "=" + kv.Value
		}
		if got != c.want || !slices.Equal(refused, c.refused) {
			t.Errorf("%s %s: %q refused %q\nwant %q refused %q", c.client, c.server, got, refused, c.want, c.refused)
		}
	}
}

func TestStemOfHostileNames(t *testing.T) {
	cases := map[string]string{
		"memory":      "memory",
		"My Server":   "%4Dy%20%53erver",
		"../../etc":   "%2E.%2F..%2Fetc",
		"a/b":         "a%2Fb",
		"con":         "%63on",
		"NUL":         "%4E%55%4C",
		"":            "%",
		"x.":          "x%2E",
		"\x1b[31mred": "%1B%5B31mred",
		"a%41":        "a%2541",
	}
	for in, want := range cases {
		if got := StemOf(in); got != want {
			t.Errorf("StemOf(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("é", 100)
	if s := StemOf(long); len(s) > 96 || StemOf(long+"x") == s {
		t.Errorf("a long name: %q", s)
	}
	if StemOf("A") == StemOf("a") {
		t.Error("names differing in case share a stem")
	}
}

func TestReadRefusesWhatTheClientWouldNot(t *testing.T) {
	cases := []struct{ client, data, want string }{
		{"claude-desktop", `{"mcpServers": {"a": {"command": "x"}, /* c */}}`, "has comments or trailing commas, which Claude Desktop does not read"},
		{"cursor", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, `server "a" is configured twice`},
		{"cline", `{"mcpServers": {"a": {"args": []}}}`, `server "a" has neither a command nor a url`},
		{"codex", "[mcp_servers.a]\ncommand = 3\n", "mcp_servers.a.command must be a string"},
		{"continue", "mcpServers:\n  - command: x\n", "has no name"},
		{"vscode", `{"servers": {"a": {"command": "x", "args": "y"}}}`, "servers.a.args must be an array of strings"},
	}
	for _, c := range cases {
		_, err := Read(Clients[c.client], "f", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.client, c.data, err, c.want)
		}
	}
	if _, err := Guess("/x/settings.ini"); err == nil || !strings.Contains(err.Error(), "this format is not supported") {
		t.Errorf("Guess of an ini file: %v", err)
	}
}

// TestHostileAndCRLFFilesRoundTrip: names a file name must not trust,
// quotes and escapes in values, CRLF line endings and a YAML entry whose
// args are added: install then uninstall still gives back every byte.
func TestHostileAndCRLFFilesRoundTrip(t *testing.T) {
	cases := []struct{ client, data string }{
		{"cursor", "{\r\n  \"mcpServers\": {\r\n    \"../../etc/passwd\": {\"command\": \"a\\\"b\\\\c\", \"args\": [\"\\u001b[31m\", \"é\"]},\r\n    \"CON\": {\"command\": \"x\"}\r\n  }\r\n}\r\n"},
		{"codex", "[mcp_servers.\"a.b\"]\r\ncommand = 'C:\\tools\\srv.exe' # literal string\r\n\r\n[mcp_servers.x]\r\ncommand = \"x\"\r\nargs = ['''multi''', \"\\u00e9\"]\r\n"},
		{"continue", "mcpServers:\r\n  - name: \"quoted: name\"\r\n    command: 'it''s'\r\n  - command: plain-cmd\r\n    name: second\r\n    args: [a, \"b\"]   # trailing\r\n"},
	}
	for _, c := range cases {
		orig, err := Read(Clients[c.client], "f", []byte(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.client, err)
		}
		f := orig
		saved := map[string]*Saved{}
		for _, e := range orig.Entries {
			data, s, err := f.Wrap(e.Name, Gateway{Binary: `C:\Program Files\crawlcheck.exe`, Lock: "l", Log: "g"})
			if err != nil {
				t.Fatalf("%s %q: %v", c.client, e.Name, err)
			}
			if f, err = Read(f.Client, "f", data); err != nil {
				t.Fatalf("%s: the wrapped file does not read: %v\n%s", c.client, err, data)
			}
			if argv, _, ok := Wrapped(f.entry(e.Name)); !ok || !slices.Equal(argv, append([]string{e.Command}, e.Args...)) {
				t.Fatalf("%s %q: wrapped reads %q", c.client, e.Name, argv)
			}
			saved[e.Name] = s
		}
		if strings.Contains(strings.ReplaceAll(string(f.Data), "\r\n", ""), "\n") {
			t.Errorf("%s: a bare LF was written into a CRLF file:\n%q", c.client, f.Data)
		}
		for name, s := range saved {
			data, err := f.Unwrap(name, s)
			if err != nil {
				t.Fatal(err)
			}
			if f, err = Read(f.Client, "f", data); err != nil {
				t.Fatal(err)
			}
		}
		if string(f.Data) != c.data {
			t.Errorf("%s: not given back:\n%q\nwant\n%q", c.client, f.Data, c.data)
		}
	}
}

func TestDefaultPaths(t *testing.T) {
	env := func(k string) string { return map[string]string{"APPDATA": `C:\Users\ann\AppData\Roaming`}[k] }
	cases := []struct{ client, goos, want string }{
		{"claude-desktop", "darwin", "/home/ann/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "linux", "/home/ann/.config/Claude/claude_desktop_config.json"},
		{"claude-code", "linux", "/w/.mcp.json /home/ann/.claude.json"},
		{"vscode", "darwin", "/w/.vscode/mcp.json /home/ann/Library/Application Support/Code/User/mcp.json"},
		{"windsurf", "linux", "/home/ann/.codeium/windsurf/mcp_config.json"},
		{"codex", "linux", "/home/ann/.codex/config.toml"},
		{"gemini", "linux", "/w/.gemini/settings.json /home/ann/.gemini/settings.json"},
		{"zed", "linux", "/w/.zed/settings.json /home/ann/.config/zed/settings.json"},
		{"continue", "linux", "/home/ann/.continue/config.yaml"},
		{"cline", "darwin", "/home/ann/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
	}
	for _, c := range cases {
		got := strings.Join(Clients[c.client].DefaultPaths(c.goos, "/home/ann", "/w", env), " ")
		if got != c.want {
			t.Errorf("%s on %s: %s, want %s", c.client, c.goos, got, c.want)
		}
	}
	if got := Clients["claude-desktop"].DefaultPaths("windows", "/home/ann", "/w", env)[0]; !strings.HasPrefix(got, `C:\Users\ann\AppData\Roaming`) {
		t.Errorf("claude-desktop on windows: %s", got)
	}
}

// TestWrapRemoteTOMLAsCodexReadsIt: Codex refuses an entry with a command
// beside url, bearer_token_env_var, http_headers or env_http_headers, and
// passes a server it starts only the variables env_vars names. The
// wrapped Codex entries, decoded as TOML, have none of those members, an
// env_vars naming each variable the gateway reads, and the headers as
// run's flags (the bare token's variable as --bearer-env).
func TestWrapRemoteTOMLAsCodexReadsIt(t *testing.T) {
	f := readFixture(t, "codex", ".codex/config.toml")
	g := Gateway{Binary: "/bin/crawlcheck", Lock: "l", Log: "g"}
	for _, name := range []string{"remote", "tracker"} {
		data, _, err := f.Wrap(name, g)
		if err != nil {
			t.Fatal(err)
		}
		if f, err = Read(f.Client, f.Path, data); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	// The fixture's last table extends docs' inline env table, which
	// this package reads and a strict decoder refuses: it is left out.
	wrapped, _, _ := strings.Cut(string(f.Data), "[mcp_servers.docs.env]")
	if err := toml.Unmarshal([]byte(wrapped), &doc); err != nil {
		t.Fatalf("the wrapped file: %v\n%s", err, f.Data)
	}
	want := map[string][2]string{
		"remote":  {`[REMOTE_TOKEN]`, `--bearer-env REMOTE_TOKEN`},
		"tracker": {`[TRACKER_KEY]`, `--header X-Team: crawl --header X-Region: eu --header-env X-Api-Key=TRACKER_KEY`},
	}
	for name, w := range want {
		m := doc.MCPServers[name]
		for _, k := range []string{"url", "bearer_token_env_var", "http_headers", "env_http_headers"} {
			if _, ok := m[k]; ok {
				t.Errorf("%s keeps %s beside its command:\n%s", name, k, f.Data)
			}
		}
		if got := fmt.Sprint(m["env_vars"]); got != w[0] {
			t.Errorf("%s env_vars %s, want %s", name, got, w[0])
		}
		if got := fmt.Sprint(m["args"]); !strings.HasSuffix(got, w[1]+"]") {
			t.Errorf("%s args %s, want them to end %s", name, got, w[1])
		}
	}
	if d := doc.MCPServers["tracker"]["startup_timeout_sec"]; d != int64(20) {
		t.Errorf("tracker's startup_timeout_sec: %v", d)
	}
}

// TestWrapRemoteRefusesWhatItCannotEdit: headers in a sub-table of a
// Codex entry are not commented out line by line (the table's lines would
// then belong to another): the entry is refused with the command line to
// write by hand. A commented line edited after install stops uninstall.
func TestWrapRemoteRefusesWhatItCannotEdit(t *testing.T) {
	sub := "[mcp_servers.r]\nurl = \"https://r.example.com/mcp\"\n\n[mcp_servers.r.http_headers]\nX-Team = \"crawl\"\n"
	f, err := Read(Clients["codex"], "config.toml", []byte(sub))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Wrap("r", Gateway{Binary: "/bin/crawlcheck", Lock: "l", Log: "g"}); err == nil || !strings.Contains(err.Error(), "by hand") || !strings.Contains(err.Error(), `"X-Team: crawl"`) {
		t.Fatalf("wrap of headers in a sub-table: %v", err)
	}
	f = readFixture(t, "codex", ".codex/config.toml")
	data, s, err := f.Wrap("tracker", Gateway{Binary: "/bin/crawlcheck", Lock: "l", Log: "g"})
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"X-Region" = "eu"`, `"X-Region" = "us"`, 1)
	if f, err = Read(f.Client, f.Path, []byte(edited)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Unwrap("tracker", s); err == nil || !strings.Contains(err.Error(), "edited since") {
		t.Fatalf("unwrap after a commented line was edited: %v", err)
	}
}
