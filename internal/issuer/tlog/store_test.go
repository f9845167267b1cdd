package tlog_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/store/pgtest"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
	"github.com/crawlcheck/verifier/internal/issuer/tlog/tlogtest"
)

// openLog opens a store by its spec, as an instance of the issuer does, and
// its log.
func openLog(t testing.TB, spec string) (store.Store, tlog.Store, *tlog.Log) {
	t.Helper()
	st, err := store.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	ls, ok := store.LogOf(st)
	if !ok {
		t.Fatal("the store keeps no log")
	}
	k := tlogtest.Key(t, repo)
	return st, ls, tlog.New(ls, tlogtest.Issuer, func() ed25519.PrivateKey { return k })
}

// sequencerSuite runs two instances appending at once to one database: the
// sequencer makes one tree of it, every entry acknowledged is in it at the
// index its proof named, and every checkpoint either instance handed out is
// consistent with the last.
func sequencerSuite(t *testing.T, spec string) {
	dir := tlogtest.Directory(t, repo)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var kept []string
	acked := map[string]string{} // entry → its proof
	for inst := range 2 {
		st, _, l := openLog(t, spec)
		defer st.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				e := fmt.Sprintf(`{"instance":%d,"n":%d}`, inst, i)
				proof, err := l.Append(context.Background(), []byte(e))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[e] = proof
				kept = append(kept, proof[strings.Index(proof, "\n\n")+2:])
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	st, ls, l := openLog(t, spec)
	defer st.Close()
	if n := tlogtest.Audit(t, dir, ls, l, kept); n != 50 {
		t.Fatalf("the log holds %d entries, want 50", n)
	}
	for e, proof := range acked {
		if v := tlogtest.VerifyEntry(t, dir, []byte(e), proof, "", nil); !v.Valid {
			t.Fatalf("the proof handed out for %s: %v", e, *v.Detail)
		}
	}
}

func TestSequencerSQLite(t *testing.T) {
	sequencerSuite(t, "sqlite:"+filepath.Join(t.TempDir(), "issuer.db"))
}

func TestSequencerPostgres(t *testing.T) {
	pg := pgtest.Run(t)
	dsn, err := pg.CreateDB("tlog")
	if err != nil {
		t.Fatal(err)
	}
	sequencerSuite(t, dsn)
}

// childEnv names the store a re-executed test binary appends to until it
// is killed (TestKilledSequencer).
const childEnv = "CRAWLCHECK_TLOG_APPEND_UNTIL_KILLED"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		appendUntilKilled(spec)
		return
	}
	os.Exit(m.Run())
}

// appendUntilKilled appends entries and writes "ack N <index>" after each
// append returned: what the issuer acknowledges is exactly what was
// committed.
func appendUntilKilled(spec string) {
	t := &testing.T{}
	st, _, l := openLog(t, spec)
	defer st.Close()
	w := bufio.NewWriter(os.Stdout)
	for n := 0; ; n++ {
		proof, err := l.Append(context.Background(), []byte(fmt.Sprintf(`{"child":%d}`, n)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		idx := strings.TrimPrefix(strings.Split(proof, "\n")[1], "index ")
		fmt.Fprintf(w, "ack %d %s\n", n, idx)
		w.Flush()
	}
}

// killSuite kills a sequencing instance with SIGKILL while it appends, then
// shows the tree still verifies, every acknowledged entry is at the index
// it was acknowledged at, and the log goes on from where it stopped.
func killSuite(t *testing.T, spec string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Create the schema first, so the child starts appending at once.
	st, _, _ := openLog(t, spec)
	st.Close()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[int]uint64{}
	sc := bufio.NewScanner(out)
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	for sc.Scan() && len(acked) < 40 {
		var n int
		var idx uint64
		if _, err := fmt.Sscanf(sc.Text(), "ack %d %d", &n, &idx); err != nil {
			t.Fatalf("child: %q", sc.Text())
		}
		acked[n] = idx
	}
	cmd.Process.Signal(syscall.SIGKILL) // mid-append: the child never stops between appends
	cmd.Wait()
	deadline.Stop()
	if len(acked) < 40 {
		t.Fatalf("the child acknowledged %d appends before it ended", len(acked))
	}
	dir := tlogtest.Directory(t, repo)
	st, ls, l := openLog(t, spec)
	defer st.Close()
	size := tlogtest.Audit(t, dir, ls, l, nil)
	entries, err := ls.LogEntries(context.Background(), 0, size)
	if err != nil {
		t.Fatal(err)
	}
	for n, idx := range acked {
		if idx >= size || string(entries[idx]) != `{"child":`+strconv.Itoa(n)+`}` {
			t.Fatalf("acknowledged entry %d at index %d is not in the log of %d", n, idx, size)
		}
	}
	before, _ := ls.LogCheckpoint(context.Background())
	if _, err := l.Append(context.Background(), []byte(`{"after":"the kill"}`)); err != nil {
		t.Fatal(err)
	}
	if n := tlogtest.Audit(t, dir, ls, l, []string{before}); n != size+1 {
		t.Fatalf("after the kill the log grew to %d, want %d", n, size+1)
	}
}

func TestKilledSequencerSQLite(t *testing.T) {
	killSuite(t, "sqlite:"+filepath.Join(t.TempDir(), "issuer.db"))
}

func TestKilledSequencerPostgres(t *testing.T) {
	pg := pgtest.Run(t)
	dsn, err := pg.CreateDB("tlogkill")
	if err != nil {
		t.Fatal(err)
	}
	killSuite(t, dsn)
}

// BenchmarkAppend times one sequenced append of a batch of 8 entries to a
// log of 50,000 (the step every instance waits for under the sequencer
// lock), on SQLite and on PostgreSQL: with one instance appending ("1"),
// with two instances on one database taking turns, so that each finds the
// log as the other left it ("2"), and with the two appending at once, each
// from its own goroutine, as two instances behind a load balancer do ("2x":
// the time is the wall time of a batch, either's). "issue" appends as the service's group commit does,
// through store.Issue with a nonce and a 1 KB document an entry, then
// answers each entry's proof from that instance's log (Appended, ProofFor);
// "log" appends through LogAppend alone.
func BenchmarkAppend(b *testing.B) {
	pg := pgtest.Run(b)
	dbs := 0
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, via := range []string{"log", "issue"} {
			for _, instances := range []string{"1", "2", "2x"} {
				b.Run(backend+"/"+via+"/"+instances, func(b *testing.B) {
					dbs++ // each run of the function its own database
					spec := "sqlite:" + filepath.Join(b.TempDir(), "issuer.db")
					if backend == "postgres" {
						var err error
						if spec, err = pg.CreateDB("bench" + strconv.Itoa(dbs)); err != nil {
							b.Fatal(err)
						}
					}
					benchAppend(b, spec, via == "issue", instances)
				})
			}
		}
	}
}

func benchAppend(b *testing.B, spec string, issue bool, mode string) {
	instances := int(mode[0] - '0')
	var stores []store.Store
	var logs []tlog.Store
	var ls []*tlog.Log
	for range instances {
		st, s, l := openLog(b, spec)
		defer st.Close()
		stores, logs, ls = append(stores, st), append(logs, s), append(ls, l)
	}
	ctx := context.Background()
	batch := func(n, size int) [][]byte {
		var es [][]byte
		for i := range size {
			es = append(es, []byte(fmt.Sprintf(`{"n":%d,"i":%d}`, n, i)))
		}
		return es
	}
	for n := range 50 {
		if _, _, err := logs[0].LogAppend(ctx, batch(-n, 1000), ls[0].Sign); err != nil {
			b.Fatal(err)
		}
	}
	body := []byte(strings.Repeat("x", 1000))
	// one is batch n by instance k.
	one := func(k, n int) error {
		es, l := batch(n, 8), ls[k]
		if !issue {
			_, _, err := logs[k].LogAppend(ctx, es, l.Sign)
			return err
		}
		items := make([]store.Issuance, len(es))
		for i, e := range es {
			items[i] = store.Issuance{Nonce: string(e), NonceExpires: time.Now().Add(time.Hour), LogEntry: e,
				Document: store.Document{SHA256: string(e), Kind: "crawlcheck-mcp-lock-check", KeyID: "k", IssuedAt: time.Now(), Body: body}}
		}
		first, cp, err := stores[k].Issue(ctx, items, l.Sign)
		if err != nil {
			return err
		}
		l.Appended(ctx, first, es)
		for i := range es {
			if _, err := l.ProofFor(ctx, first+uint64(i), cp); err != nil {
				return err
			}
		}
		return nil
	}
	b.ResetTimer()
	if mode != "2x" {
		for n := range b.N {
			if err := one(n%instances, n); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int(next.Add(1)) - 1; n < b.N; n = int(next.Add(1)) - 1 {
				if err := one(k, n); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
