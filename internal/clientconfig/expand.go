package clientconfig

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Target is an entry with its variables expanded as its client expands
// them: what the client starts or reaches.
type Target struct {
	Command string
	Args    []string
	Env     []KV
	Cwd     string
	URL     string
	SSE     bool
	Headers []KV
}

// Context is what a client's variables can name: the environment, the home
// directory and the workspace (the folder holding .vscode/ or .cursor/).
type Context struct {
	Env       func(string) (string, bool)
	Home      string
	Workspace string
}

// Expand resolves the variables of an entry of the file the way its client
// does. What the client would resolve from somewhere a check cannot read (a
// VS Code input prompt, a Continue secret, a ${file:…}, an unset variable
// the client refuses) is refused by name: the entry is not checked with
// the text left in.
func (f *File) Expand(e *Entry, ctx Context) (Target, []string) {
	c := f.Client
	x := &expander{client: c, ctx: ctx, inputs: f.Inputs}
	t := Target{Command: x.s(e.Command), Cwd: x.s(e.Cwd), URL: x.s(e.URL), SSE: e.SSE}
	for _, a := range e.Args {
		t.Args = append(t.Args, x.s(a))
	}
	for _, kv := range e.Env {
		t.Env = append(t.Env, KV{kv.Key, x.s(kv.Value)})
	}
	for _, kv := range e.Headers {
		t.Headers = append(t.Headers, KV{kv.Key, x.s(kv.Value)})
	}
	for _, kv := range e.EnvHeaders {
		if v, ok := ctx.Env(kv.Value); ok && v != "" {
			t.Headers = append(t.Headers, KV{kv.Key, v})
		} else {
			x.refuse("env_http_headers " + kv.Key + " = " + kv.Value + " (the variable is not set)")
		}
	}
	if e.BearerEnv != "" {
		if v, ok := ctx.Env(e.BearerEnv); ok && v != "" {
			t.Headers = append(t.Headers, KV{"Authorization", "Bearer " + v})
		} else {
			x.refuse("bearer_token_env_var " + e.BearerEnv + " (the variable is not set)")
		}
	}
	for _, u := range e.Unsupported {
		x.refuse(u + " (crawlcheck does not read it, so it cannot check the server as " + c.Title + " starts it)")
	}
	return t, x.refused
}

var (
	dollarBrace   = regexp.MustCompile(`\$\{([^}]*)\}`)
	claudeVar     = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)
	geminiVar     = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
	continueVar   = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)
	envNameSuffix = regexp.MustCompile(`^env:([A-Za-z_][A-Za-z0-9_]*)$`)
)

type expander struct {
	client  *Client
	ctx     Context
	inputs  map[string]string // VS Code's inputs: their descriptions, by id
	refused []string
}

func (x *expander) refuse(what string) {
	for _, r := range x.refused {
		if r == what {
			return
		}
	}
	x.refused = append(x.refused, what)
}

// env is a variable's value; unset variables are refused with why.
func (x *expander) env(name, whole string) string {
	v, ok := x.ctx.Env(name)
	if !ok {
		x.refuse(whole + " (the variable is not set)")
		return whole
	}
	return v
}

// s expands one string.
func (x *expander) s(in string) string {
	switch x.client.Name {
	case "claude-code":
		// ${VAR} and ${VAR:-default}; an unset VAR with no default makes
		// Claude Code refuse the config.
		return claudeVar.ReplaceAllStringFunc(in, func(m string) string {
			g := claudeVar.FindStringSubmatch(m)
			if v, ok := x.ctx.Env(g[1]); ok {
				return v
			}
			if strings.Contains(m, ":-") {
				return g[2]
			}
			x.refuse(m + " (the variable is not set and has no default)")
			return m
		})
	case "vscode", "cursor":
		return dollarBrace.ReplaceAllStringFunc(in, func(m string) string {
			name := m[2 : len(m)-1]
			switch {
			case envNameSuffix.MatchString(name):
				v, _ := x.ctx.Env(name[len("env:"):])
				if x.client.Name == "cursor" {
					return x.env(name[len("env:"):], m)
				}
				return v // VS Code resolves an unset variable to ""
			case strings.HasPrefix(name, "input:") && x.client.Name == "vscode":
				what := "VS Code prompts for it"
				if d, ok := x.inputs[name[len("input:"):]]; ok && d != "" {
					what += ", " + strconv.Quote(d)
				}
				x.refuse(m + " (" + what + " when it starts the server: a check cannot answer)")
			case name == "userHome":
				return x.ctx.Home
			case name == "workspaceFolder" && x.ctx.Workspace != "":
				return x.ctx.Workspace
			case name == "workspaceFolderBasename" && x.ctx.Workspace != "":
				return filepath.Base(x.ctx.Workspace)
			case name == "pathSeparator" || name == "/":
				return string(os.PathSeparator)
			default:
				x.refuse(m + " (not a variable crawlcheck expands as " + x.client.Title + " does)")
			}
			return m
		})
	case "windsurf":
		return dollarBrace.ReplaceAllStringFunc(in, func(m string) string {
			name := m[2 : len(m)-1]
			switch {
			case envNameSuffix.MatchString(name):
				return x.env(name[len("env:"):], m)
			case strings.HasPrefix(name, "file:"):
				x.refuse(m + " (Windsurf reads a file into it: crawlcheck does not)")
			}
			return m
		})
	case "gemini":
		return geminiVar.ReplaceAllStringFunc(in, func(m string) string {
			g := geminiVar.FindStringSubmatch(m)
			return x.env(g[1]+g[2], m)
		})
	case "continue":
		return continueVar.ReplaceAllStringFunc(in, func(m string) string {
			x.refuse(m + " (Continue fills it from its secrets or inputs: a check cannot read them)")
			return m
		})
	case "mcp-json":
		return dollarBrace.ReplaceAllStringFunc(in, func(m string) string {
			x.refuse(m + " (the config's client is not known, so neither is how it expands variables: name it with --client)")
			return m
		})
	}
	// Claude Desktop, Codex CLI, Zed and Cline pass the text as written.
	return in
}
