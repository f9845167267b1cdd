// Package interop is the interop matrix (issue 17): every host entry point
// of crawlcheck against MCP servers nobody here wrote, each started by the
// test from the version the repository pins, over each transport it
// serves. For each cell: the lockfile `crawlcheck lock` makes against the
// server lets every tool through; a description changed in flight
// (package inflight: a proxy for HTTP, a wrapper for stdio) withholds that
// tool alone in enforce, pauses in review and records `would` in observe;
// every record is byte-identical to `crawlcheck check --json` at the same
// pinned clock against the same server; and the record log verifies.
//
// The matrix runs under `make test-interop` (CRAWLCHECK_INTEROP=1);
// docs/interop.md is generated from its definition and results
// (`make interop-doc`), and TestDocCurrent fails when it is stale.
package interop

import (
	"fmt"
	"sort"
	"strings"
)

// A Server is one column group: a server, where it comes from, and the
// tool the matrix changes in flight.
type Server struct {
	ID       string // short name, the column's prefix
	Package  string // registry package
	Version  string // the pinned version (checked against the installed one)
	Registry string // npm, PyPI, or this repository
	Tool     string // the tool whose description is changed
	// Transports the server serves, in column order.
	Transports []string
}

// Transports, as the columns name them.
const (
	Stdio      = "stdio"
	Streamable = "streamable HTTP"
	LegacySSE  = "HTTP+SSE (2024-11-05)"
)

// Servers are the matrix's columns.
var Servers = []Server{
	{ID: "everything", Package: "@modelcontextprotocol/server-everything", Version: "2026.8.31", Registry: "npm", Tool: "echo", Transports: []string{Stdio, Streamable, LegacySSE}},
	{ID: "memory", Package: "@modelcontextprotocol/server-memory", Version: "2026.8.31", Registry: "npm", Tool: "create_entities", Transports: []string{Stdio}},
	{ID: "filesystem", Package: "@modelcontextprotocol/server-filesystem", Version: "2026.8.31", Registry: "npm", Tool: "read_file", Transports: []string{Stdio}},
	{ID: "scenario", Package: "hosttest/mcpserver", Version: "v1.8.0", Registry: "this repository (go-sdk)", Tool: "get_item", Transports: []string{Stdio, Streamable}},
	{ID: "time", Package: "mcp-server-time", Version: "2026.10.19", Registry: "PyPI", Tool: "get_current_time", Transports: []string{Stdio}},
	{ID: "git", Package: "mcp-server-git", Version: "2026.10.19", Registry: "PyPI", Tool: "git_status", Transports: []string{Stdio}},
	// FastMCP (mcp 1.x's server framework, bindings/python/tests/
	// fastmcp_server.py) in each of its streamable HTTP modes: stateful or
	// stateless_http, answers as SSE or (-json) json_response.
	{ID: "fastmcp", Package: "mcp", Version: PyMCP1, Registry: "PyPI", Tool: "echo", Transports: []string{Streamable}},
	{ID: "fastmcp-json", Package: "mcp", Version: PyMCP1, Registry: "PyPI", Tool: "echo", Transports: []string{Streamable}},
	{ID: "fastmcp-stateless", Package: "mcp", Version: PyMCP1, Registry: "PyPI", Tool: "echo", Transports: []string{Streamable}},
	{ID: "fastmcp-stateless-json", Package: "mcp", Version: PyMCP1, Registry: "PyPI", Tool: "echo", Transports: []string{Streamable}},
}

// A Host is one row: an entry point a user calls.
type Host struct {
	ID, Name string
	// Versions are the SDK or framework versions the row runs on.
	Versions string
	// Hands is whether the row hands tools to a model (the CLI only
	// writes the record).
	Hands bool
	// NPM are the npm packages (name@version) the row runs on, checked
	// against what is installed.
	NPM []string
	// Venv is a Python row's environment under build/ (the Makefile's
	// build/py-mcp1 or build/py-mcp2, each with the frameworks that run
	// on its mcp), and PyPI the packages (name==version) the row runs on
	// there, checked against what is installed.
	Venv string
	PyPI []string
	// Gateway is a row of `crawlcheck run` (docs/gateway.md) under a
	// client: a paused session is an empty tool list there, not a refused
	// session (the client keeps its handshake and shows why).
	Gateway bool
}

// Hosts are the matrix's rows.
var Hosts = []Host{
	{ID: "go", Name: "Go preflight (`bindings/go/preflight`)", Versions: "go-sdk v1.8.0", Hands: true},
	{ID: "cli", Name: "CLI (`crawlcheck lock` / `check`)", Versions: "go-sdk v1.8.0"},
	{ID: "js-sdk1", Name: "JS `withPreflight`, SDK 1.x", Versions: "@modelcontextprotocol/sdk 1.32.2", Hands: true, NPM: []string{"@modelcontextprotocol/sdk@1.32.2"}},
	{ID: "js-sdk2", Name: "JS `withPreflight`, client 2.x", Versions: "@modelcontextprotocol/client 2.4.0", Hands: true, NPM: []string{"@modelcontextprotocol/client@2.4.0"}},
	{ID: "js-agents", Name: "JS `withContinuity` (OpenAI Agents)", Versions: "@openai/agents 0.20.0 on @modelcontextprotocol/client 2.4.0", Hands: true, NPM: []string{"@openai/agents@0.20.0", "@openai/agents-core@0.20.0", "@modelcontextprotocol/client@2.4.0"}},
	{ID: "js-langchain", Name: "JS `loadMcpToolsWithContinuity` (LangChain)", Versions: "@langchain/mcp-adapters 1.1.4 on @modelcontextprotocol/sdk 1.32.2", Hands: true, NPM: []string{"@langchain/mcp-adapters@1.1.4", "@modelcontextprotocol/sdk@1.32.2"}},
	{ID: "py-mcp1", Name: "Python `with_preflight`, mcp 1.x", Versions: "mcp " + PyMCP1, Hands: true, Venv: "py-mcp1", PyPI: []string{"mcp==" + PyMCP1}},
	{ID: "py-mcp2", Name: "Python `with_preflight`, mcp 2.x", Versions: "mcp " + PyMCP2, Hands: true, Venv: "py-mcp2", PyPI: []string{"mcp==" + PyMCP2}},
	{ID: "py-langchain", Name: "Python `crawlcheck.langchain.load_mcp_tools_with_continuity`", Versions: "langchain-mcp-adapters " + PyLangChain + ", mcp " + PyMCP1, Hands: true, Venv: "py-mcp1", PyPI: []string{"langchain-mcp-adapters==" + PyLangChain, "mcp==" + PyMCP1}},
	{ID: "py-agents", Name: "Python `crawlcheck.openai_agents.with_continuity`", Versions: "openai-agents " + PyAgents + ", mcp " + PyMCP2, Hands: true, Venv: "py-mcp2", PyPI: []string{"openai-agents==" + PyAgents, "mcp==" + PyMCP2}},
	{ID: "gateway-sdk1", Name: "Gateway `crawlcheck run` under the TS SDK 1.x client", Versions: "@modelcontextprotocol/sdk 1.32.2", Hands: true, NPM: []string{"@modelcontextprotocol/sdk@1.32.2"}, Gateway: true},
	{ID: "gateway-sdk2", Name: "Gateway `crawlcheck run` under the TS client 2.x", Versions: "@modelcontextprotocol/client 2.4.0", Hands: true, NPM: []string{"@modelcontextprotocol/client@2.4.0"}, Gateway: true},
	{ID: "gateway-py-mcp1", Name: "Gateway `crawlcheck run` under the Python client, mcp 1.x", Versions: "mcp " + PyMCP1, Hands: true, Venv: "py-mcp1", PyPI: []string{"mcp==" + PyMCP1}, Gateway: true},
	{ID: "gateway-py-mcp2", Name: "Gateway `crawlcheck run` under the Python client, mcp 2.x", Versions: "mcp " + PyMCP2, Hands: true, Venv: "py-mcp2", PyPI: []string{"mcp==" + PyMCP2}, Gateway: true},
	{ID: "py-crewai", Name: "Python `crawlcheck.crewai.mcp_tools`", Versions: "crewai-tools " + PyCrewAI + ", mcp " + PyMCP1, Hands: true, Venv: "py-mcp1", PyPI: []string{"crewai-tools==" + PyCrewAI, "mcp==" + PyMCP1}},
}

// The versions of the Python rows (bindings/python/requirements).
const (
	PyMCP1      = "1.30.0"
	PyMCP2      = "2.3.0"
	PyLangChain = "0.3.2"
	PyAgents    = "0.24.0"
	PyCrewAI    = "1.15.30"
)

// Cannot are the cells that cannot exist, by host ID then column
// (server ID + "/" + transport), with the reason. None today: the gateway
// rows, which had no HTTP cells while `crawlcheck run` had a stdio side
// only, run theirs through `crawlcheck run --url` (issue 32). A cell goes
// here only with the reason no host entry point could run it.
var Cannot = map[string]map[string]string{}

// Pending are the rows and columns issue 17 asks for that the matrix does
// not run yet: listed in docs/interop.md so nobody reads their absence as
// a pass.
var Pending = []string{
	"Python `crawlcheck.crewai.with_continuity(MCPServerAdapter(...))`: the driver runs it (`bindings/python/tests/interop_driver.py`, host `py-crewai-adapter`), and every cell fails. MCPServerAdapter makes its handshake in its constructor, before the wrapper has the adapter, and neither mcp 1.x's `ClientSession` nor mcpadapt keeps the `initialize` answer: its records carry no handshake (no `handshake`, and `instructions` and `server_info` in `blind_parts`) where `crawlcheck check` saw it, so they are not byte-identical. `mcp_tools` (the `py-crewai` row, every transport) is the path that sees the handshake.",
}

// A Cell is one host against one server over one transport.
type Cell struct {
	Host      Host
	Server    Server
	Transport string
}

// Column names the cell's column.
func (c Cell) Column() string { return c.Server.ID + "/" + c.Transport }

// Name is the cell's subtest name.
func (c Cell) Name() string {
	return c.Host.ID + "/" + c.Server.ID + "/" + strings.ReplaceAll(strings.Fields(c.Transport)[0], "+", "-")
}

// CannotExist is the reason the cell cannot exist, or "".
func (c Cell) CannotExist() string { return Cannot[c.Host.ID][c.Column()] }

// Cells lists every cell, rows first.
func Cells() []Cell {
	var cells []Cell
	for _, h := range Hosts {
		for _, s := range Servers {
			for _, tr := range s.Transports {
				cells = append(cells, Cell{Host: h, Server: s, Transport: tr})
			}
		}
	}
	return cells
}

// Render writes docs/interop.md from the definition and the results (by
// Cell.Name: "pass", or "fail: why"); a cell that can exist and has no
// result is "not run".
func Render(results map[string]string) string {
	var b strings.Builder
	b.WriteString("# Interop matrix\n\n")
	b.WriteString("Generated by `make interop-doc` from the matrix in `hosttest/interop` (issue 17); do not edit.\n")
	b.WriteString("`make test` runs the matrix (`make test-interop`), and `TestDocCurrent` fails when this file is\n")
	b.WriteString("stale against the matrix's definition.\n\n")
	b.WriteString("Each cell is one host entry point against one server over one transport, the server started by the\n")
	b.WriteString("test from the pinned version. A cell passes when:\n\n")
	b.WriteString("- the lockfile `crawlcheck lock` makes against the server proceeds with every tool (`unchanged`,\n  every tool handed over);\n")
	b.WriteString("- with one tool's description changed in flight (a byte-passing proxy for HTTP, a wrapper for stdio,\n  both owned by the test), enforce withholds that tool alone, review pauses, observe records `would`;\n")
	b.WriteString("- every record (the first of a session: a server may re-announce its list right after the handshake)\n  is byte-identical to `crawlcheck check --json` at the same pinned clock against the same server;\n")
	b.WriteString("- the record log verifies (`crawlcheck record verify`).\n\n")
	b.WriteString("The gateway rows run `crawlcheck run` (docs/gateway.md) in front of the stdio server, under the client\nnamed: a paused session is an empty tool list there (the client keeps its session and shows why).\nserver-everything's round trips through the gateway (sampling, elicitation, roots, ping, progress,\nlogging, cancellation) are internal/gateway's TestEverythingTypeScript (the two TypeScript clients)\nand TestEverythingRoundTrips (go-sdk).\n\n")
	b.WriteString("## Servers\n\n| server | package | version | registry | changed in flight |\n|---|---|---|---|---|\n")
	for _, s := range Servers {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | `%s` |\n", s.ID, s.Package, s.Version, s.Registry, s.Tool)
	}
	b.WriteString("\n## Hosts\n\n| host | runs on |\n|---|---|\n")
	for _, h := range Hosts {
		fmt.Fprintf(&b, "| %s | %s |\n", h.Name, h.Versions)
	}
	b.WriteString("\nOver HTTP the gateway rows' client starts `crawlcheck run --url URL` (`--sse` for HTTP+SSE) as its\nstdio server, as `crawlcheck install` writes a client's remote entry, the URL the in-flight proxy's.\n")
	b.WriteString("\n## Results\n\n| host |")
	cols := Cells()[:0]
	for _, c := range Cells() {
		if c.Host.ID == Hosts[0].ID {
			cols = append(cols, c)
		}
	}
	for _, c := range cols {
		fmt.Fprintf(&b, " %s %s |", c.Server.ID, c.Transport)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(cols)))
	b.WriteString("\n")
	var notes []string
	for _, h := range Hosts {
		fmt.Fprintf(&b, "| %s |", h.Name)
		for _, col := range cols {
			c := Cell{Host: h, Server: col.Server, Transport: col.Transport}
			switch why := c.CannotExist(); {
			case why != "":
				notes = append(notes, fmt.Sprintf("%s × %s %s: %s", h.Name, c.Server.ID, c.Transport, why))
				fmt.Fprintf(&b, " cannot exist[^%d] |", len(notes))
			case results[c.Name()] == "":
				b.WriteString(" not run |")
			default:
				r := results[c.Name()]
				if r != "pass" {
					r = "**fail**"
				}
				fmt.Fprintf(&b, " %s |", r)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for i, n := range notes {
		fmt.Fprintf(&b, "[^%d]: %s\n", i+1, n)
	}
	b.WriteString("\n## Not in the matrix yet\n\n")
	for _, p := range Pending {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	var failed []string
	for name, r := range results {
		if r != "pass" {
			failed = append(failed, fmt.Sprintf("- `%s`: %s", name, r))
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		b.WriteString("\n## Failures of this run\n\n" + strings.Join(failed, "\n") + "\n")
	}
	return b.String()
}

// AllPass is the results of a run where every cell that can exist passed:
// the committed doc.
func AllPass() map[string]string {
	r := map[string]string{}
	for _, c := range Cells() {
		if c.CannotExist() == "" {
			r[c.Name()] = "pass"
		}
	}
	return r
}
