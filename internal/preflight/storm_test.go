package preflight_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server announcing list changes without end (issue 22, F8): background
// re-checks are rate-limited as in the JS and Python SDKs (RecheckMin,
// doubling while the storm lasts), and every record a storm gives says so.

// sameT2 notifies without changing a byte of the list: every record is
// unchanged.
const sameT2 = `{"notify":true,"ops":[{"op":"edit","name":"t2","set":{"description":"Lists the items."}}]}`

// kept collects every record a session makes; added, when set, is called
// after each (a waiter's wake).
type kept struct {
	mu    sync.Mutex
	recs  []preflight.Record
	added func()
}

func (k *kept) add(r preflight.Record) {
	k.mu.Lock()
	k.recs = append(k.recs, r)
	k.mu.Unlock()
	if k.added != nil {
		k.added()
	}
}

func (k *kept) all() []preflight.Record {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]preflight.Record(nil), k.recs...)
}

// openKept opens a session on s that keeps its records in k (copts: the
// client's options, nil for none).
func openKept(t *testing.T, s *server, k *kept, copts *mcp.ClientOptions) *preflight.Session {
	t.Helper()
	cfg := preflight.Config{LockPath: lockOf(t, s, preflight.LockOptions{}), LogPath: filepath.Join(t.TempDir(), "records.jsonl"),
		Now: fixedNow, Timeout: checkTimeout, OnRecord: k.add}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	sess, err := preflight.Open(ctx, impl, copts, s.inner(), nil, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func TestStormRecordsAreBoundedAndSaySo(t *testing.T) {
	var storm []string
	for i := range 2000 {
		storm = append(storm, fmt.Sprintf(`{"after_lists":%d,%s`, i+1, strings.TrimPrefix(sameT2, "{")))
	}
	// Each stdio connection is a server of its own: the lockfile's listing
	// (lockOf) does not count.
	s := start(t, "stdio", `{"tools":`+threeTools+`,"mutations":[`+strings.Join(storm, ",")+`]}`)
	k := &kept{}
	sess := openKept(t, s, k, nil)
	time.Sleep(3500 * time.Millisecond)
	recs := k.all()
	// The first check, then background re-checks at about 0 s, 1 s and 3 s.
	if len(recs) < 2 || len(recs) > 5 {
		t.Fatalf("records after 3.5 s of a storm: %d, want 2 to 5", len(recs))
	}
	if recs[0].Storm != nil || recs[1].Storm != nil {
		t.Errorf("the first check and the first re-check (at once, one notification) are no storm's: %+v, %+v", recs[0].Storm, recs[1].Storm)
	}
	for i, r := range recs[2:] {
		if r.Effect != preflight.EffectProceed {
			t.Errorf("record %d: effect %s", i+2, r.Effect)
		}
		if r.Storm == nil || r.Storm.Coalesced < 1 || r.Storm.HeldBackMS <= 0 || r.Storm.HeldBackMS > preflight.RecheckMax.Milliseconds() {
			t.Errorf("record %d: storm %+v, want the notifications it covers and how long it was held back", i+2, r.Storm)
		}
	}
	// A call after an announced change re-checks at once, held back or not.
	before := sess.Record().RecordSHA256
	started := time.Now()
	if err := call(sess, "t1"); err != nil {
		t.Fatal(err)
	}
	if sess.Record().RecordSHA256 == before {
		t.Error("the call was judged by the record from before the newest announcement")
	}
	if d := time.Since(started); d > 3*time.Second {
		t.Errorf("the call waited %v: it waited out the hold-off", d)
	}
}

// TestStormCoalescedNotifications: every list_changed the client received
// is covered by exactly one re-check, and a burst of them is coalesced
// into one held-back re-check (the first runs at once, the rest wait out
// the pace). What is counted is what the client received, not the
// mutations sent: the server's SDK debounces list changes (10 ms), so on a
// loaded machine two mutations close together give one notification, and
// one mutation (a placeholder tool added, then removed) may give two — the
// test once failed so, counting six mutations against five or seven
// notifications. It waits on its events (a notification, a record) with a
// deadline, never on a sleep.
func TestStormCoalescedNotifications(t *testing.T) {
	s := start(t, "stdio", `{"tools":`+threeTools+`}`)
	events := make(chan struct{}, 1)
	wake := func() {
		select {
		case events <- struct{}{}:
		default:
		}
	}
	// The handler runs after the session's own (which counts first), so a
	// record may cover a notification a moment before it is counted here:
	// covered above received is waited out, not failed at once.
	var received atomic.Int64
	k := &kept{added: wake}
	openKept(t, s, k, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		received.Add(1)
		wake()
	}})
	const mutations = 6
	for range mutations {
		s.mutate(t, sameT2)
	}
	deadline := time.NewTimer(checkTimeout)
	defer deadline.Stop()
	for {
		covered, coalesced := int64(0), false
		recs := k.all()
		for _, r := range recs[1:] {
			switch {
			case r.Storm != nil:
				covered += int64(r.Storm.Coalesced)
				coalesced = coalesced || r.Storm.Coalesced > 1
			default:
				covered++
			}
		}
		n := received.Load()
		if covered == n && coalesced {
			return
		}
		select {
		case <-events:
		case <-deadline.C:
			b, _ := json.Marshal(recs)
			t.Logf("%s", b)
			t.Fatalf("re-checks covered %d notifications of the %d received (from %d mutations), coalesced %v: want all, and a burst coalesced", covered, n, mutations, coalesced)
		}
	}
}
