package core_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// issuerFaultTimeoutMS is the issuer deadline the hosts run the timeout
// case with.
const issuerFaultTimeoutMS = 1000

// issuerFaultURL is the issuer of every case's request: nothing listens
// there. A case with a knob is run against the test issuer instead, whose
// URL the host's record names in its place.
const issuerFaultURL = "http://127.0.0.1:2"

// issuerFaultPage is the one tools/list page the cases' server answers.
const issuerFaultPage = `{"tools":[{"name":"get_issue","description":"Get one issue by its number.","inputSchema":{"type":"object"}}]}`

// issuerFaultServer is a stdio MCP server (sh) answering initialize with
// faultHandshake and every tools/list with issuerFaultPage (any other
// request is told there is no such method): a healthy server, so that the
// record shows the issuer's fault alone.
func issuerFaultServer() []any {
	script := `while read -r l; do id=$(printf '%s' "$l" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'); ` +
		`case "$l" in *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":` + faultHandshake + `}\n' "$id";; ` +
		`*'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":` + issuerFaultPage + `}\n' "$id";; ` +
		`*) [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}\n' "$id";; esac; done`
	return []any{"sh", "-c", script}
}

// issuerFaultCase is one way an issuer gives nothing to judge: the test
// issuer's knob a host produces it with ("" for nothing listening), whether
// the deployment has only pinned keys (the key directory is fetched first,
// and fails first), and the issuer member a host hands the core.
type issuerFaultCase struct {
	name   string
	down   string
	pinned bool
	issuer obj
	// deadlineMS, when not 0, is the issuer's deadline for this case
	// instead of the file's timeout_ms: 32 MiB must not race it.
	deadlineMS int
}

func issuerFaultCases() []issuerFaultCase {
	at := func(step, fault string) obj { return obj{"url": issuerFaultURL, "step": step, "fault": fault} }
	with := func(o obj, k string, v any) obj { o[k] = v; return o }
	return []issuerFaultCase{
		{"nothing listening", "", false, at("lock_check", "connect_refused"), 0},
		{"nothing listening, pinned keys only", "", true, at("key_directory", "connect_refused"), 0},
		{"timing out", "hang", false, with(at("lock_check", "timeout"), "timeout_ms", issuerFaultTimeoutMS), 0},
		{"answering 500", "500", false, with(at("lock_check", "http_status"), "status", 500), 0},
		{"answering too large", "huge", false, at("lock_check", "answer_too_large"), 60000},
		{"answering what is not JSON", "garbage", false, at("lock_check", "response_malformed"), 0},
	}
}

// TestIssuerFaultsGolden holds testdata/issuer-faults.json: each way an
// issuer gives nothing to judge, the continuity_check request a host makes
// with it (its server read whole, the issuer member naming the step and
// the fault) and the record it gives. Every host (Go preflight, CLI, JS,
// Python) reproduces it live (docs/testdata.md): the record is
// byte-identical because the detail is the core's wording of the fault.
func TestIssuerFaultsGolden(t *testing.T) {
	path := filepath.Join(testdataDir, "issuer-faults.json")
	command := issuerFaultServer()
	endpoint := resultField(t, call(t, "endpoint", obj{"command": command}), "endpoint")
	var tools []obj
	var page struct{ Tools []obj }
	if err := json.Unmarshal([]byte(issuerFaultPage), &page); err != nil {
		t.Fatal(err)
	}
	tools = page.Tools
	lock := lockDocAt(t, tools, endpoint)
	directory, err := os.ReadFile(filepath.Join(testdataDir, "keys", "test-directory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dir obj
	if err := json.Unmarshal(directory, &dir); err != nil {
		t.Fatal(err)
	}
	pin := obj{"kid": "test-issuer-2026", "public_key": "R2+nOTqJ24B+Bub9jH6p+WWS7P39GRzcQVzBDMKGvUQ="}
	var rows []canon.Value
	for _, c := range issuerFaultCases() {
		req := obj{"now": checkNow, "mode": "enforce", "lock": lock,
			"observed": obj{"endpoint": endpoint, "handshake": "initialize", "protocol_version": "2025-06-18",
				"handshake_result": faultHandshake, "pages": []any{issuerFaultPage}},
			"issuer": c.issuer}
		if c.pinned {
			req["pinned_keys"] = []any{pin}
		} else {
			req["key_directory"] = dir
		}
		rv, err := canon.Parse(mustJSON(t, req))
		if err != nil {
			t.Fatal(err)
		}
		res, err := canon.Parse(call(t, "continuity_check", req))
		if err != nil {
			t.Fatal(err)
		}
		members := []canon.Member{canon.M("name", canon.Str(c.name)), canon.M("down", canon.StrOrNull(c.down, c.down != "")),
			canon.M("request", rv), canon.M("record", res)}
		if c.deadlineMS != 0 {
			members = append(members, canon.M("deadline_ms", canon.Int(int64(c.deadlineMS))))
		}
		rows = append(rows, canon.Obj(members...))
	}
	cmd, err := canon.Parse(mustJSON(t, command))
	if err != nil {
		t.Fatal(err)
	}
	doc := canon.Obj(
		canon.M("kind", canon.Str("crawlcheck-issuer-fault-golden")),
		canon.M("v", canon.Int(1)),
		canon.M("about", canon.Str("Each case: a way an issuer gives nothing to judge (docs/receipts.md, Issuer faults), the continuity_check request a host makes with it of `server` (a stdio MCP server read whole) and the record it must give, byte for byte once compacted. The issuer of every request is "+issuerFaultURL+", where nothing listens; a case with `down` runs against the test issuer with that knob (hosttest/issuer --down), whose URL replaces it in the request, and the record is then continuity_check's of that request. A host asks with the request's key_directory, or with its pinned_keys only, and `timeout_ms` as the issuer's deadline (a case's deadline_ms instead, where it has one). Written by `go test ./core -update`.")),
		canon.M("timeout_ms", canon.Int(issuerFaultTimeoutMS)),
		canon.M("server", canon.Obj(canon.M("command", cmd))),
		canon.M("cases", canon.Arr(rows...)),
	)
	holdDocument(t, path, doc)
}
