package core_test

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// faultTimeoutMS is the deadline the hosts run the timeout cases with.
const faultTimeoutMS = 1500

// faultHandshake is what the hanging server of the tools/list cases
// answers to initialize (one line, its id echoed): a session that reaches
// tools/list and gets no answer there.
const faultHandshake = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fault-server","version":"1.0.0"}}`

// faultCase is one host fault: the server every host produces it from
// (nil: none, the facts alone), the facts a host hands the core, and so the
// record.
type faultCase struct {
	name     string
	server   obj // {"url"} or {"command"}; nil for a fault no live server here makes
	observed obj
	// deadlineMS, when not 0, is the host's deadline for this case instead
	// of the file's timeout_ms: reading 70 MiB must not race it.
	deadlineMS int
}

// answerThen is a stdio server (sh) that answers initialize with
// faultHandshake (an SDK that asks server/discover first is told there is
// no such method, and falls back) and then does what rest says.
func answerThen(rest string) obj {
	script := `while read -r l; do id=$(printf '%s' "$l" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'); ` +
		`case "$l" in *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":` + faultHandshake + `}\n' "$id"; break;; esac; ` +
		`[ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}\n' "$id"; done; ` + rest
	return obj{"command": []any{"sh", "-c", script}}
}

// bigPagesBytes is the size of each page's one description in the
// pages_over_cap case: under the hosts' default answer cap (16 MiB), and
// five of them past the pages' bound together (limits.pages_bytes, 64 MiB)
// where four are not.
const bigPagesBytes = 14 << 20

// bigPages is a stdio server (sh) that answers every tools/list with a
// page of one tool whose description is bigPagesBytes long, and a new
// cursor: a list no check can carry, each page of it within the answer cap.
func bigPages() obj {
	return answerThen(`n=0; while read -r l; do id=$(printf '%s' "$l" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'); ` +
		`case "$l" in *'"tools/list"'*) n=$((n+1)); ` +
		`printf '{"jsonrpc":"2.0","id":%s,"result":{"nextCursor":"c%s","tools":[{"name":"t%s","inputSchema":{"type":"object"},"description":"' "$id" "$n" "$n"; ` +
		`head -c ` + strconv.Itoa(bigPagesBytes) + ` /dev/zero | tr '\000' a; printf '"}]}}\n';; esac; done`)
}

func faultCases(t *testing.T) []faultCase {
	at := func(f, where string, page int) obj {
		o := obj{"failure": f, "failure_at": where}
		if page > 0 {
			o["failure_page"] = page
		}
		return o
	}
	handshook := func(o obj) obj {
		o["handshake"] = "initialize"
		o["protocol_version"] = "2025-06-18"
		o["handshake_result"] = faultHandshake
		return o
	}
	timed := func(o obj) obj { o["timeout_ms"] = faultTimeoutMS; return o }
	metadata := func(o obj, url string) obj { o["resource_metadata"] = url; return o }
	return []faultCase{
		{"connect_refused over HTTP", obj{"url": "http://127.0.0.1:2/mcp"}, at("connect_refused", "handshake", 0), 0},
		{"command_not_found: no program of that name", obj{"command": []any{"/nonexistent/crawlcheck-fault-server"}},
			with(at("command_not_found", "handshake", 0), "failure_command", "/nonexistent/crawlcheck-fault-server"), 0},
		{"connect_refused: the command does not start", obj{"command": []any{"/dev/null"}}, at("connect_refused", "handshake", 0), 0},
		{"process_exited in the handshake", obj{"command": []any{"sh", "-c", `printf 'starting\n\nerror: \033[31m--access-token is required\033[0m\n' >&2; exit 3`}},
			with(with(at("process_exited", "handshake", 0), "exit_status", 3), "stderr_tail", "starting\n\nerror: \x1b[31m--access-token is required\x1b[0m\n"), 0},
		{"timeout in the handshake", obj{"command": []any{"sh", "-c", "cat >/dev/null"}}, timed(at("timeout", "handshake", 0)), 0},
		{"process_exited at tools/list", answerThen(`while read -r l; do case "$l" in *'"tools/list"'*) exit 0;; esac; done`), handshook(at("process_exited", "tools/list", 1)), 0},
		{"timeout at tools/list", answerThen("cat >/dev/null"), handshook(timed(at("timeout", "tools/list", 1))), 0},
		{"timeout without its deadline", nil, at("timeout", "tools/list", 2), 0},
		{"cancelled", nil, at("cancelled", "handshake", 0), 0},
		{"session_ended", nil, at("session_ended", "tools/list", 3), 0},
		{"session_failed", nil, at("session_failed", "handshake", 0), 0},
		{"pages_over_cap: five pages of 14 MiB", bigPages(), handshook(at("pages_over_cap", "tools/list", 5)), 120000},
		{"answer_too_large", nil, obj{"failure": "answer_too_large", "failure_detail": "65536"}, 0},
		// A 401 names the resource metadata URL its WWW-Authenticate gave,
		// escaped (the server's text: here with a terminal escape).
		{"unauthorized with its resource metadata", nil, metadata(at("unauthorized", "handshake", 0), "http://127.0.0.1:2/.well-known/oauth-protected-resource/mcp\x1b[2J"), 0},
		{"unauthorized without resource metadata", nil, at("unauthorized", "handshake", 0), 0},
		{"forbidden", nil, metadata(at("forbidden", "tools/list", 1), "http://127.0.0.1:2/.well-known/oauth-protected-resource/mcp"), 0},
	}
}

// faultRequest is a case's continuity_check request: a lockfile pinning
// the case's endpoint, so the record shows the fault alone.
func faultRequest(t *testing.T, c faultCase) obj {
	server := c.server
	if server == nil {
		server = obj{"url": "http://127.0.0.1:2/mcp"}
	}
	endpoint := resultField(t, call(t, "endpoint", server), "endpoint")
	if endpoint == "" {
		t.Fatalf("%s: no endpoint for %v", c.name, server)
	}
	observed := obj{"endpoint": endpoint}
	for k, v := range c.observed {
		observed[k] = v
	}
	return obj{"now": checkNow, "mode": "enforce", "lock": lockDocAt(t, baseTools(), endpoint), "observed": observed}
}

// TestFaultsGolden holds testdata/faults.json: each host fault's request
// gives exactly its record, and every host (Go preflight, CLI, JS, Python)
// produces that record from the live server the case names
// (docs/testdata.md).
func TestFaultsGolden(t *testing.T) {
	path := filepath.Join(testdataDir, "faults.json")
	cases := faultCases(t)
	rows := make([]canon.Value, 0, len(cases))
	for _, c := range cases {
		reqJSON := mustJSON(t, faultRequest(t, c))
		rv, err := canon.Parse(reqJSON)
		if err != nil {
			t.Fatal(err)
		}
		res, err := canon.Parse(call(t, "continuity_check", faultRequest(t, c)))
		if err != nil {
			t.Fatal(err)
		}
		server := canon.NullValue()
		if c.server != nil {
			if server, err = canon.Parse(mustJSON(t, c.server)); err != nil {
				t.Fatal(err)
			}
		}
		members := []canon.Member{canon.M("name", canon.Str(c.name)), canon.M("server", server), canon.M("request", rv), canon.M("record", res)}
		if c.deadlineMS != 0 {
			members = append(members, canon.M("deadline_ms", canon.Int(int64(c.deadlineMS))))
		}
		rows = append(rows, canon.Obj(members...))
	}
	doc := canon.Obj(
		canon.M("kind", canon.Str("crawlcheck-fault-golden")),
		canon.M("v", canon.Int(1)),
		canon.M("about", canon.Str("Each case: a host fault (docs/continuity.md, Host faults), the live server a host produces it from (null: none), the continuity_check request a host makes of it with the case's lockfile, now, mode and timeout_ms as its deadline (deadline_ms instead, where a case has one; the request names timeout_ms for a timeout), and the record it must give, byte for byte once compacted. Written by `go test ./core -update`.")),
		canon.M("timeout_ms", canon.Int(faultTimeoutMS)),
		canon.M("cases", canon.Arr(rows...)),
	)
	got := holdDocument(t, path, doc)
	// Every case is a record of nothing compared, worded by the core.
	var file struct {
		Cases []struct {
			Name   string
			Record struct {
				Observations []struct{ Observation string }
			}
		}
	}
	json.Unmarshal(got, &file)
	for _, c := range file.Cases {
		if len(c.Record.Observations) != 1 || !strings.Contains("server_unavailable check_timeout", c.Record.Observations[0].Observation) {
			t.Errorf("%s: %+v", c.Name, c.Record.Observations)
		}
	}
}
