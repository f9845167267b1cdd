package preflight_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// A server announcing list changes without end (issue 22, F8): background
// re-checks are rate-limited as in the JS and Python SDKs (RecheckMin,
// doubling while the storm lasts), and every record a storm gives says so.

// sameT2 notifies without changing a byte of the list: every record is
// unchanged.
const sameT2 = `{"notify":true,"ops":[{"op":"edit","name":"t2","set":{"description":"Lists the items."}}]}`

// kept collects every record a session makes.
type kept struct {
	mu   sync.Mutex
	recs []preflight.Record
}

func (k *kept) add(r preflight.Record) { k.mu.Lock(); k.recs = append(k.recs, r); k.mu.Unlock() }

func (k *kept) all() []preflight.Record {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]preflight.Record(nil), k.recs...)
}

func openKept(t *testing.T, s *server) (*preflight.Session, *kept) {
	t.Helper()
	k := &kept{}
	cfg := preflight.Config{LockPath: lockOf(t, s, preflight.LockOptions{}), LogPath: filepath.Join(t.TempDir(), "records.jsonl"),
		Now: fixedNow, Timeout: checkTimeout, OnRecord: k.add}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	sess, err := preflight.Open(ctx, impl, nil, s.inner(), nil, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, k
}

func TestStormRecordsAreBoundedAndSaySo(t *testing.T) {
	var storm []string
	for i := range 2000 {
		storm = append(storm, fmt.Sprintf(`{"after_lists":%d,%s`, i+1, strings.TrimPrefix(sameT2, "{")))
	}
	// Each stdio connection is a server of its own: the lockfile's listing
	// (lockOf) does not count.
	s := start(t, "stdio", `{"tools":`+threeTools+`,"mutations":[`+strings.Join(storm, ",")+`]}`)
	sess, k := openKept(t, s)
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

func TestStormCoalescedNotifications(t *testing.T) {
	s := start(t, "stdio", `{"tools":`+threeTools+`}`)
	_, k := openKept(t, s)
	const announced = 6
	for range announced {
		s.mutate(t, sameT2)
	}
	// Every notification is covered by exactly one re-check: the first runs
	// at once, the rest are coalesced into the one held back after it.
	deadline := time.Now().Add(checkTimeout)
	for {
		covered, coalesced := 0, false
		for _, r := range k.all()[1:] {
			switch {
			case r.Storm != nil:
				covered += r.Storm.Coalesced
				coalesced = coalesced || r.Storm.Coalesced > 1
			default:
				covered++
			}
		}
		if covered == announced {
			if !coalesced {
				b, _ := json.Marshal(k.all()[1:])
				t.Errorf("no record coalesced the burst: %s", b)
			}
			return
		}
		if covered > announced || time.Now().After(deadline) {
			b, _ := json.Marshal(k.all())
			t.Logf("%s", b)
			t.Fatalf("re-checks covered %d notifications, want %d", covered, announced)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
