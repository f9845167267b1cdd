// Package clientconfig reads and edits the MCP server entries of the config
// files ten MCP clients launch their servers from: Claude Desktop, Claude
// Code, Cursor, VS Code, Windsurf, Codex CLI, Gemini CLI, Zed, Continue and
// Cline.
//
// Each client keeps its servers in its own file format (JSON, JSON with
// comments, TOML, YAML) under its own member names, and expands its own
// variables. Read answers one Entry per server as that client reads it;
// Expand resolves the variables the way that client does, or refuses them
// by name; Wrap and Unwrap rewrite an entry's command and arguments in
// place, touching no other byte of the file, so that comments, key order,
// variables and the user's formatting survive an install and an uninstall
// gives back the original bytes.
//
// This package is a host's: it moves bytes between files and the core.
// Which servers a check covers and what its answer means are the core's
// ci_plan and ci_verdict; the entries are handed to them as a normalized
// MCP config (Normalized).
package clientconfig

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Client is one MCP client whose config files this package reads.
type Client struct {
	// Name is the --client value.
	Name string
	// Title is the client's name for people.
	Title string
	// Format is the file format: "json" (strict JSON: comments make the
	// client refuse the file), "jsonc" (JSON with comments and trailing
	// commas), "toml" or "yaml".
	Format string
	// paths are the default config files, most specific first, for an OS
	// (GOOS), home directory, working directory and environment.
	paths func(goos, home, cwd string, env func(string) string) []string
}

// Clients are the supported clients, by --client name.
var Clients = map[string]*Client{
	"claude-desktop": {Name: "claude-desktop", Title: "Claude Desktop", Format: "json", paths: func(goos, home, cwd string, env func(string) string) []string {
		switch goos {
		case "darwin":
			return []string{filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")}
		case "windows":
			return []string{filepath.Join(appData(home, env), "Claude", "claude_desktop_config.json")}
		}
		return []string{filepath.Join(xdgConfig(home, env), "Claude", "claude_desktop_config.json")}
	}},
	"claude-code": {Name: "claude-code", Title: "Claude Code", Format: "json", paths: func(goos, home, cwd string, env func(string) string) []string {
		return []string{filepath.Join(cwd, ".mcp.json"), filepath.Join(home, ".claude.json")}
	}},
	"cursor": {Name: "cursor", Title: "Cursor", Format: "json", paths: func(goos, home, cwd string, env func(string) string) []string {
		return []string{filepath.Join(cwd, ".cursor", "mcp.json"), filepath.Join(home, ".cursor", "mcp.json")}
	}},
	"vscode": {Name: "vscode", Title: "VS Code", Format: "jsonc", paths: func(goos, home, cwd string, env func(string) string) []string {
		user := filepath.Join(xdgConfig(home, env), "Code", "User", "mcp.json")
		switch goos {
		case "darwin":
			user = filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json")
		case "windows":
			user = filepath.Join(appData(home, env), "Code", "User", "mcp.json")
		}
		return []string{filepath.Join(cwd, ".vscode", "mcp.json"), user}
	}},
	"windsurf": {Name: "windsurf", Title: "Windsurf", Format: "json", paths: func(goos, home, cwd string, env func(string) string) []string {
		return []string{filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")}
	}},
	"codex": {Name: "codex", Title: "Codex CLI", Format: "toml", paths: func(goos, home, cwd string, env func(string) string) []string {
		if h := env("CODEX_HOME"); h != "" {
			return []string{filepath.Join(h, "config.toml")}
		}
		return []string{filepath.Join(home, ".codex", "config.toml")}
	}},
	"gemini": {Name: "gemini", Title: "Gemini CLI", Format: "jsonc", paths: func(goos, home, cwd string, env func(string) string) []string {
		return []string{filepath.Join(cwd, ".gemini", "settings.json"), filepath.Join(home, ".gemini", "settings.json")}
	}},
	"zed": {Name: "zed", Title: "Zed", Format: "jsonc", paths: func(goos, home, cwd string, env func(string) string) []string {
		user := filepath.Join(xdgConfig(home, env), "zed", "settings.json")
		switch goos {
		case "darwin":
			user = filepath.Join(home, ".config", "zed", "settings.json")
		case "windows":
			user = filepath.Join(appData(home, env), "Zed", "settings.json")
		}
		return []string{filepath.Join(cwd, ".zed", "settings.json"), user}
	}},
	"continue": {Name: "continue", Title: "Continue", Format: "yaml", paths: func(goos, home, cwd string, env func(string) string) []string {
		return []string{filepath.Join(home, ".continue", "config.yaml")}
	}},
	// mcp-json is a JSON file of mcpServers (or VS Code's servers) whose
	// client is not known: read as written, with no variable expanded
	// (each ${…} is refused by name), nothing disabled.
	"mcp-json": {Name: "mcp-json", Title: "MCP JSON", Format: "jsonc", paths: func(goos, home, cwd string, env func(string) string) []string {
		return []string{filepath.Join(cwd, "mcp.json")}
	}},
	"cline": {Name: "cline", Title: "Cline", Format: "json", paths: func(goos, home, cwd string, env func(string) string) []string {
		var code string
		switch goos {
		case "darwin":
			code = filepath.Join(home, "Library", "Application Support", "Code")
		case "windows":
			code = filepath.Join(appData(home, env), "Code")
		default:
			code = filepath.Join(xdgConfig(home, env), "Code")
		}
		return []string{filepath.Join(code, "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")}
	}},
}

// Guess is the client whose config file path is, by its name and folder,
// or an error saying the format is not supported.
func Guess(path string) (*Client, error) {
	base := strings.ToLower(filepath.Base(path))
	dir := strings.ToLower(filepath.Base(filepath.Dir(path)))
	name := ""
	switch {
	case base == "claude_desktop_config.json":
		name = "claude-desktop"
	case base == ".mcp.json" || base == ".claude.json":
		name = "claude-code"
	case base == "mcp.json" && dir == ".cursor":
		name = "cursor"
	case base == "mcp.json" && (dir == ".vscode" || dir == "user"):
		name = "vscode"
	case base == "mcp_config.json":
		name = "windsurf"
	case base == "config.toml":
		name = "codex"
	case base == "settings.json" && dir == ".gemini":
		name = "gemini"
	case base == "settings.json" && (dir == "zed" || dir == ".zed"):
		name = "zed"
	case strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml"):
		name = "continue"
	case base == "cline_mcp_settings.json":
		name = "cline"
	case strings.HasSuffix(base, ".json"):
		name = "mcp-json"
	default:
		return nil, fmt.Errorf("%s: this format is not supported (name the client with --client: %s)", path, strings.Join(Names(), ", "))
	}
	return Clients[name], nil
}

// Names are the clients' names, sorted, for messages.
func Names() []string {
	out := make([]string, 0, len(Clients))
	for n := range Clients {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup is the client named name, or an error naming the supported ones.
func Lookup(name string) (*Client, error) {
	c, ok := Clients[name]
	if !ok {
		return nil, fmt.Errorf("client %q: this client is not supported (supported: %s)", name, strings.Join(Names(), ", "))
	}
	return c, nil
}

// DefaultPaths are the client's config files on goos, most specific first:
// a project's file (under cwd) before the user's.
func (c *Client) DefaultPaths(goos, home, cwd string, env func(string) string) []string {
	return c.paths(goos, home, cwd, env)
}

// appData is %APPDATA%, or its default under the home directory.
func appData(home string, env func(string) string) string {
	if a := env("APPDATA"); a != "" {
		return a
	}
	return filepath.Join(home, "AppData", "Roaming")
}

// xdgConfig is $XDG_CONFIG_HOME, or ~/.config.
func xdgConfig(home string, env func(string) string) string {
	if x := env("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	return filepath.Join(home, ".config")
}

// KV is one member of an env or headers map, in file order.
type KV struct{ Key, Value string }

// Entry is one configured server, as its client reads it.
type Entry struct {
	// Name is the server's name in the file. Claude Code's per-project
	// servers in ~/.claude.json are "PROJECT#NAME", so that every entry of
	// a file has its own name.
	Name    string
	Command string
	Args    []string
	Env     []KV
	Cwd     string
	// URL is a remote server's endpoint; Remote the member it came from
	// (url, serverUrl, httpUrl); SSE that it is the legacy HTTP+SSE
	// transport's event stream.
	URL     string
	Remote  string
	SSE     bool
	Headers []KV
	// Disabled says why the client does not start the server ("disabled:
	// true", "enabled = false", "listed in mcp.excluded"), empty when it
	// does.
	Disabled string
	// Unsupported names a member this package cannot honour (an envFile,
	// a Codex env_http_headers, …): the entry is refused, never checked
	// without it.
	Unsupported []string
	// BearerEnv is Codex's bearer_token_env_var: the variable whose value
	// is sent as "Authorization: Bearer …".
	BearerEnv string
	// EnvHeaders are Codex's env_http_headers: each header's value is the
	// value of the variable named (Key the header, Value the variable).
	EnvHeaders []KV

	loc *location // where command and args are in the file, for Wrap
}

// Stdio reports whether the client launches the entry as a process.
func (e *Entry) Stdio() bool { return e.URL == "" && e.Command != "" }

// File is a config file read for one client.
type File struct {
	Client  *Client
	Path    string
	Data    []byte
	Entries []*Entry
	// Inputs are VS Code's declared inputs, by id: their descriptions,
	// which a refusal of ${input:ID} quotes.
	Inputs map[string]string
	// format answers the literals of this file's format, for Wrap.
	format format
}

// Read parses a config file of the client. The file's format decides the
// reader; an entry with neither command nor url is an error naming it.
func Read(c *Client, path string, data []byte) (*File, error) {
	f := &File{Client: c, Path: path, Data: data}
	var err error
	switch c.Format {
	case "json", "jsonc":
		err = readJSON(f)
	case "toml":
		err = readTOML(f)
	case "yaml":
		err = readYAML(f)
	default:
		err = fmt.Errorf("%s: this format is not supported", c.Format)
	}
	if err != nil {
		return nil, fmt.Errorf("%s (%s config): %w", path, c.Title, err)
	}
	seen := map[string]bool{}
	for _, e := range f.Entries {
		if seen[e.Name] {
			return nil, fmt.Errorf("%s: server %q is configured twice: which one the client starts is not certain", path, e.Name)
		}
		seen[e.Name] = true
		if e.URL == "" && e.Command == "" && e.Unsupported == nil {
			return nil, fmt.Errorf("%s: server %q has neither a command nor a url", path, e.Name)
		}
	}
	return f, nil
}
