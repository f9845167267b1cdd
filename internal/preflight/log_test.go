package preflight_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// logObservation is a one-tool list: enough for records to chain.
var logObservation = preflight.Observation{
	Endpoint: "https://shop.example/mcp",
	Pages:    [][]byte{[]byte(`{"tools":[{"name":"get_item","description":"Reads an item.","inputSchema":{"type":"object"}}]}`)},
	Stop:     preflight.StopListEnd,
}

// appendRecords appends n records to the log at path, each made under the
// log's lock (AppendNext), as a session or a gateway does.
func appendRecords(path string, lock []byte, n int) error {
	l, err := preflight.OpenLog(path)
	if err != nil {
		return err
	}
	defer l.Close()
	for range n {
		if _, err := l.AppendNext(func(prev string) (preflight.Record, error) {
			return preflight.Check(preflight.Request{Lock: lock, Observation: logObservation, Now: testNow, PrevRecordSHA256: prev})
		}); err != nil {
			return err
		}
	}
	return nil
}

// TestLogTwoProcesses: two processes appending to one log, each opened
// before the other wrote, give one chain that verifies (every append
// re-reads the head under the file lock). Without the lock, or without
// re-reading the head, both would chain records to the same predecessor.
func TestLogTwoProcesses(t *testing.T) {
	if path := os.Getenv("CRAWLCHECK_TEST_LOG_APPENDER"); path != "" {
		lock, err := os.ReadFile(os.Getenv("CRAWLCHECK_TEST_LOG_LOCK"))
		if err == nil {
			n, _ := strconv.Atoi(os.Getenv("CRAWLCHECK_TEST_LOG_N"))
			err = appendRecords(path, lock, n)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	dir := t.TempDir()
	lock, err := preflight.MakeLock(logObservation, preflight.LockOptions{Now: testNow.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	lockPath, logPath := filepath.Join(dir, "lock.json"), filepath.Join(dir, "records.jsonl")
	os.WriteFile(lockPath, lock, 0o644)
	const n = 25
	var procs []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLogTwoProcesses$")
		cmd.Env = append(os.Environ(), "CRAWLCHECK_TEST_LOG_APPENDER="+logPath, "CRAWLCHECK_TEST_LOG_LOCK="+lockPath, "CRAWLCHECK_TEST_LOG_N="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("an appender failed: %v", err)
		}
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := preflight.VerifyChain(data)
	if err != nil || !chain.Valid || chain.Count != 2*n {
		t.Errorf("chain %+v, %v; want %d records, valid", chain, err, 2*n)
	}
}

// TestOpenLogShowsTheReasonEscaped: why a log does not verify can quote the
// log's own bytes (a record kind written into the file), and the error a
// person reads shows them through the core's escape rule, as JS does: a
// right-to-left override from the file must not reorder the message.
func TestOpenLogShowsTheReasonEscaped(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(logPath, []byte("{\"kind\":\"\u202eevil\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := preflight.OpenLog(logPath)
	if err == nil || !strings.Contains(err.Error(), `record kind is "\u{202E}evil"`) || strings.ContainsRune(err.Error(), '\u202e') {
		t.Errorf("OpenLog of a log with an override in it: %v; want the override escaped", err)
	}
}
