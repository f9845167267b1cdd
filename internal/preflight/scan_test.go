package preflight

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestScanTools: the binding hands the core the observation's pages and
// reads its answer; names keeps those tools; a capture failure is refused.
func TestScanTools(t *testing.T) {
	page := []byte(`{"tools":[{"name":"a","description":"Reads ~/.ssh/id_rsa."},{"name":"b","description":"See https://docs.example."}]}`)
	obs := Observation{Pages: [][]byte{page}}
	s, err := ScanTools(obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Severity != "high" || len(s.Findings) != 2 || s.Findings[0].Rule != "sensitive.path" || s.Findings[0].Span != "~/.ssh/id_rsa" || !s.AtLeast("medium") || s.Listed() != 2 {
		t.Fatalf("%+v", s)
	}
	var raw map[string]any
	if err := json.Unmarshal(s.Raw, &raw); err != nil || raw["rules_sha256"] != s.RulesSHA256 {
		t.Fatalf("raw %s", s.Raw)
	}
	b, err := ScanTools(obs, []string{"b"})
	if err != nil || b.Severity != "low" || len(b.Findings) != 1 || b.Findings[0].Tool != "b" || b.AtLeast("medium") {
		t.Fatalf("%+v %v", b, err)
	}
	if _, err := ScanTools(Observation{Failure: FailureUnavailable, FailureDetail: "refused"}, nil); err == nil {
		t.Fatal("a failed capture was scanned")
	}
	if l, err := ScanList([]byte(`[{"name":"c","description":"\u202e"}]`)); err != nil || l.Severity != "high" {
		t.Fatalf("%+v %v", l, err)
	}
}

// TestPinnedScan: the scan a new lockfile pins reads back as the scan of its
// list (what crawlcheck lock shows instead of scanning twice); an
// agentgate.lock pins none.
func TestPinnedScan(t *testing.T) {
	page := []byte(`{"tools":[{"name":"a","description":"Reads ~/.ssh/id_rsa."},{"name":"b","description":"See https://docs.example."}]}`)
	obs := Observation{Pages: [][]byte{page}}
	want, err := ScanTools(obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := MakeLock(obs, LockOptions{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := PinnedScan(lock)
	if !ok || string(got.Raw) != string(want.Raw) || !reflect.DeepEqual(got.Findings, want.Findings) || !reflect.DeepEqual(got.Kinds, want.Kinds) ||
		got.Severity != "high" || got.RulesSHA256 != want.RulesSHA256 {
		t.Fatalf("pinned %v %+v\nscanned %s", ok, got, want.Raw)
	}
	ag, err := MakeLock(obs, LockOptions{Format: "agentgate", Name: "s", Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := PinnedScan(ag); ok {
		t.Fatal("an agentgate.lock has a pinned scan")
	}
	// Not the core's bytes: no scan, and no panic.
	for _, bad := range []string{"", "{", `{"a"`, `{"a":`, `{"a" `, `{"scan_at_approval":{`, `{"scan_at_approval":{"severity":}}`, `[1]`, `{1:2}`, "\"", `{"`} {
		if _, ok := PinnedScan([]byte(bad)); ok {
			t.Errorf("%q has a pinned scan", bad)
		}
	}
}

// FuzzPinnedScan: whatever the bytes, PinnedScan answers without panicking,
// and a scan it finds is valid JSON.
func FuzzPinnedScan(f *testing.F) {
	f.Add([]byte(`{"scan_at_approval":{"severity":"none","kinds":{},"findings":[],"rules_sha256":"x"}}`))
	f.Add([]byte(`{"a":[1,"x\"]"],"scan_at_approval":{}}`))
	f.Fuzz(func(t *testing.T, lock []byte) {
		if s, ok := PinnedScan(lock); ok && !json.Valid(s.Raw) {
			t.Fatalf("%q: scan %q", lock, s.Raw)
		}
	})
}
