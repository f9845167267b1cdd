package report_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/heappeak"
	"github.com/crawlcheck/verifier/internal/report"
)

// chain is n chained continuity records made by the core, a record log
// (one a line), and each record's record_sha256.
func chain(t testing.TB, n int) ([]byte, []string) {
	t.Helper()
	tools := `[{"name":"get_issue","description":"Get one issue by its number.","inputSchema":{"type":"object"}}]`
	var l struct{ Lock json.RawMessage }
	if err := corecall.Into("make_lock", map[string]any{"tools": json.RawMessage(tools), "approved_at": "2026-12-01T10:00:00Z",
		"server": map[string]any{"url": "https://mcp.example.com/mcp"}}, &l); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var sums []string
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range n {
		q := map[string]any{"now": start.Add(time.Duration(i) * time.Second).Format(time.RFC3339), "mode": "enforce", "lock": l.Lock,
			"observed": map[string]any{"endpoint": "https://mcp.example.com/mcp", "pages": []string{`{"tools":` + tools + `}`}}}
		if i > 0 {
			q["prev_record_sha256"] = sums[i-1]
		}
		rec, err := corecall.Call("continuity_check", q)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			SHA string `json:"record_sha256"`
		}
		json.Unmarshal(rec, &r)
		log.Write(rec)
		log.WriteByte('\n')
		sums = append(sums, r.SHA)
	}
	return log.Bytes(), sums
}

// oneRequest is the core's verify_chain of the whole log in one request:
// what the report's parts must add up to.
func oneRequest(t *testing.T, log []byte, after string) report.Chain {
	t.Helper()
	req := map[string]any{"records": corecall.Text(log)}
	if after != "" {
		req["after"] = after
	}
	var c report.Chain
	if err := corecall.Into("verify_chain", req, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestChainInParts: the report's chain, checked in parts a few records
// long, is the chain one request over the whole log answers: valid, broken
// in a later part (broken_at and the reason's line counted from the log's
// start), a torn tail, and a log that follows an anchor.
func TestChainInParts(t *testing.T) {
	log, sums := chain(t, 12)
	lines := strings.SplitAfter(string(log), "\n")
	defer func(n int) { *report.ChainChunkBytes = n }(*report.ChainChunkBytes)
	*report.ChainChunkBytes = 3 * len(lines[0]) // about three records a part

	swapped := strings.Join(append(append(append([]string{}, lines[:8]...), lines[9], lines[8]), lines[10:]...), "")
	for _, c := range []struct {
		name, log, after string
	}{
		{"valid", string(log), ""},
		{"broken in a later part", swapped, ""},
		{"torn tail", string(log) + lines[0][:40], ""},
		{"after an anchor", strings.Join(lines[5:], ""), sums[4]},
		{"not after the anchor", strings.Join(lines[5:], ""), sums[3]},
	} {
		want := oneRequest(t, []byte(c.log), c.after)
		r, err := report.Build(report.Input{Week: "2026-W49", Records: []byte(c.log), After: c.after})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := json.Marshal(r.Chain)
		w, _ := json.Marshal(want)
		if !bytes.Equal(got, w) {
			t.Errorf("%s: the chain in parts is %s; one request says %s", c.name, got, w)
		}
	}
}

// TestBuildMemoryBounded (issue 37, F4/F5): given its log in parts
// (Input.Parts, as the issuer reads a pilot's records a page at a time),
// the heap Build takes does not grow with the log: over a log of 8 MiB
// read from a file 256 KiB at a time, it stays under half the log (which
// the whole log given at once would be, and more).
func TestBuildMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("makes an 8 MiB chain")
	}
	path := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(path, bigLog(t, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	var r *report.Report
	var err error
	peak := heappeak.Of(func() { r, err = report.Build(report.Input{Week: "2026-W49", Parts: fileParts(path)}) })
	if err != nil || !r.Chain.Valid || r.Records == 0 {
		t.Fatalf("%v %+v", err, r)
	}
	t.Logf("log %d bytes, %d records, peak heap %d bytes", st.Size(), r.Chain.Count, peak)
	if peak > uint64(st.Size())/2 {
		t.Errorf("Build took %d bytes of heap over a log of %d read in parts: its memory grows with the records", peak, st.Size())
	}
}

// fileParts reads a record log from a file in parts of whole lines.
func fileParts(path string) func(func([]byte) error) error {
	return func(each func([]byte) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rd := bufio.NewReaderSize(f, 64<<10)
		var part []byte
		for {
			line, err := rd.ReadSlice('\n')
			part = append(part, line...)
			if err == nil && len(part) >= 256<<10 || err == io.EOF && len(part) > 0 {
				if e := each(part); e != nil {
					return e
				}
				part = part[:0]
			}
			if err == io.EOF {
				return nil
			}
			if err != nil && err != bufio.ErrBufferFull {
				return err
			}
		}
	}
}

// bigLog is a valid record log (one chain) of at least size bytes.
func bigLog(t testing.TB, size int) []byte {
	one, _ := chain(t, 1)
	log, _ := chain(t, size/len(one)+1)
	return log
}
