package tools

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/memo"
)

// summary is everything FromPages answers of a walk, part hashes and the
// handed-off tools included.
func summary(pages []string, capped bool) string {
	obs, err := FromPages(pages, capped)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	b.WriteString(obs.Truncated + " " + strconv.Itoa(obs.Pages) + "\n")
	for i := range obs.Tools {
		tl := &obs.Tools[i]
		b.WriteString(tl.Name + " " + tl.Description + " " + tl.SHA256 + " " + tl.Parts().Value().String() + " " + string(tl.Handoff(true, true)) + "\n")
	}
	return b.String()
}

// resetWalks empties the walk memo, so a test starts cold.
func resetWalks() { walks.Clear() }

// newestWalk is the walk kept last.
func newestWalk() *walk {
	var w *walk
	walks.Each(func(e memo.Entry[walk]) bool { w = e.Value(); return false })
	return w
}

// TestWalkMemo: a walk read again is answered from the memo with what
// reading gave; a page one byte different is read whole and gives the
// changed tool; the memo owns its bytes, so a host reusing the buffer it
// handed over (an ABI-2 attachment) changes nothing kept; pageCapReached is
// part of the key; errors are never kept; a caller computing part hashes
// does not write into what is kept.
func TestWalkMemo(t *testing.T) {
	resetWalks()
	const page = `{"tools":[{"name":"a","description":"Adds.","inputSchema":{"type":"object"}},{"name":"b","description":"Bakes.","annotations":{"readOnlyHint":true}}]}`
	buf := []byte(page)
	host := unsafe.String(&buf[0], len(buf)) // as req hands over an attachment: the host's bytes, in place

	cold := summary([]string{host}, false)
	if _, ok := knownWalk([]string{page}, false); ok {
		t.Fatal("a walk read once is kept")
	}
	if again := summary([]string{host}, false); again != cold {
		t.Fatalf("a walk read again:\n%s\nvs\n%s", again, cold)
	}
	if _, ok := knownWalk([]string{page}, false); !ok {
		t.Fatal("a walk read twice is not kept")
	}
	if newestWalk().obs.Tools[0].parts != nil {
		t.Fatal("the part hashes a caller asked for were written into the memo's tools")
	}
	reused := strings.Replace(page, "Adds.", "Adds!", 1)
	copy(buf, reused) // the host reuses its buffer
	if warm := summary([]string{page}, false); warm != cold {
		t.Fatalf("a hit answers otherwise than reading:\n%s\nvs\n%s", warm, cold)
	}
	got := summary([]string{reused}, false)
	resetWalks()
	if want := summary([]string{reused}, false); got != want {
		t.Fatalf("the bytes of a reused buffer:\n%s\nwant\n%s", got, want)
	}

	// One description byte changed: a miss, read whole.
	changed := strings.Replace(page, "Bakes.", "Bakes!", 1)
	FromPages([]string{page}, false)
	got = summary([]string{changed}, false)
	resetWalks()
	if want := summary([]string{changed}, false); got != want || !strings.Contains(got, "b Bakes! ") {
		t.Fatalf("a page one byte different, after a hit:\n%s\nwant\n%s", got, want)
	}
	if got == cold {
		t.Fatal("a changed description gave the kept answer")
	}

	// pageCapReached is part of the key.
	capped, err := FromPages([]string{page}, true)
	if err != nil || capped.Truncated != TruncatedPageCap {
		t.Fatalf("the same page with the cap reached: %q, %v", capped.Truncated, err)
	}
	if obs, _ := FromPages([]string{page}, false); obs.Truncated != "" {
		t.Fatalf("the cap's answer was given for a walk without it: %q", obs.Truncated)
	}

	// Errors are made by reading, every time, and never kept.
	bad := `{"tools":[{"name":"a"},{"name":"a"}]}`
	for range 2 {
		if _, err := FromPages([]string{bad}, false); err == nil || !strings.Contains(err.Error(), "both named") {
			t.Fatalf("a duplicate name: %v", err)
		}
	}
	if _, ok := knownWalk([]string{bad}, false); ok {
		t.Fatal("a walk that failed was kept")
	}
}

// TestWalkMemoBounds: the memo keeps at most walksKept walks, what they
// cost within the instance's budget, and no walk over walkMax.
func TestWalkMemoBounds(t *testing.T) {
	resetWalks()
	defer resetWalks()
	big := `{"tools":[{"name":"big","description":"` + strings.Repeat("x", walkMax) + `"}]}`
	for range 2 {
		if _, err := FromPages([]string{big}, false); err != nil {
			t.Fatal(err)
		}
	}
	if walks.Len() != 0 {
		t.Fatal("a walk over walkMax was kept")
	}
	third := `{"tools":[{"name":"t","description":"` + strings.Repeat("x", walkMax/3) + `"}]}`
	for i := range 2 * walksKept {
		p := `{"tools":[{"name":"t` + string(rune('a'+i)) + `"}]}`
		if i%2 == 0 {
			p = third[:len(third)-4] + string(rune('a'+i)) + `"}]}`
		}
		for range 2 {
			if _, err := FromPages([]string{p}, false); err != nil {
				t.Fatal(err)
			}
		}
		n := int64(0)
		walks.Each(func(e memo.Entry[walk]) bool { n += walkCost(e.Value()); return true })
		if st := walks.Stats(); st.Entries > walksKept || st.Bytes != n || memo.Instance.Used() > memo.Instance.Limit() {
			t.Fatalf("after %d walks: %d kept, %d bytes counted, %d held", i+1, st.Entries, st.Bytes, n)
		}
	}
}

// TestHashKeptList: a list the parser's container memo keeps (a request's
// tools sent again) is hashed once and its tools kept beside it; a hit
// answers what hashing gave, and a caller's part hashes are its own.
func TestHashKeptList(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := 0; b.Len() < 20<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"description":"Tool ` + strconv.Itoa(i) + ` reads.","name":"t` + strconv.Itoa(i) + `"}`)
	}
	b.WriteString(`]}`)
	hashOf := func() ([]Tool, canon.Value) {
		doc, err := canon.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		list, _ := doc.Get("tools")
		ts, err := Hash(list)
		if err != nil {
			t.Fatal(err)
		}
		return ts, list
	}
	hashOf() // a list is kept the second time it is read, the memo having room
	cold, list := hashOf()
	kept, ok := canon.Derived(list, hashedKey)
	if !ok {
		t.Fatal("the tools of a kept list were not kept")
	}
	cold[0].Parts()
	if kept.(Observed).Tools[0].parts != nil {
		t.Fatal("a caller's part hashes were written into the kept tools")
	}
	if obs, _ := Read(list); obs.listSHA256 == "" || obs.ListSHA256() != ListSHA256(cold) {
		t.Fatal("a kept list's digest is not kept with it, or not its tools'")
	}
	warm, _ := hashOf()
	if len(warm) != len(cold) {
		t.Fatalf("%d tools, then %d", len(cold), len(warm))
	}
	for i := range cold {
		if warm[i].Name != cold[i].Name || warm[i].SHA256 != cold[i].SHA256 || warm[i].Parts() != cold[i].Parts() {
			t.Fatalf("tool %d: a hit answers otherwise than hashing", i)
		}
	}
}

// TestPageCursor: a page of a kept walk answers next_page's question (its
// cursor) as ParsePage does; a page the walk did not parse, or never read,
// is not known.
func TestPageCursor(t *testing.T) {
	resetWalks()
	defer resetWalks()
	const (
		p1    = `{"tools":[{"name":"a"}],"nextCursor":"c1"}`
		p2    = `{"tools":[{"name":"b"}],"nextCursor":"c1"}` // repeats c1: the walk stops
		p3    = `{"tools":[{"name":"c"}]}`
		other = `{"tools":[{"name":"d"}]}`
	)
	for range 2 {
		if _, err := FromPages([]string{p1, p2, p3}, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		page         string
		cursor       string
		more, parsed bool
	}{{p1, "c1", true, true}, {p2, "c1", true, true}, {p3, "", false, false}, {other, "", false, false}} {
		cursor, more, ok := PageCursor(c.page)
		if ok != c.parsed || cursor != c.cursor || more != c.more {
			t.Errorf("PageCursor(%s) = %q, %v, %v", c.page, cursor, more, ok)
		}
		if ok {
			_, wc, wm, err := ParsePage(c.page)
			if err != nil || wc != cursor || wm != more {
				t.Errorf("PageCursor(%s) differs from ParsePage: %q %v", c.page, wc, wm)
			}
		}
	}
}

// keptWalk reports whether page alone is a walk kept, without touching the
// memo (knownWalk would note a sighting).
func keptWalk(page string) bool {
	found := false
	walks.Each(func(e memo.Entry[walk]) bool {
		found = len(e.Value().pages) == 1 && e.Value().pages[0].String() == page
		return !found
	})
	return found
}

// firstPages identifies what the memo holds, in order.
func firstPages() []*byte {
	var ps []*byte
	walks.Each(func(e memo.Entry[walk]) bool {
		ps = append(ps, unsafe.StringData(e.Value().pages[0].String()))
		return true
	})
	return ps
}

func onePage(i int) string {
	return `{"tools":[{"name":"t` + strconv.Itoa(i) + `","description":"Tool ` + strconv.Itoa(i) + `."}]}`
}

// TestWalkMemoRotation: more walks than the memo keeps, read in turn (an
// issuer serving several clients, the benchmark's respaced pages), keep
// walksKept of them, which hit (at least 40% of the reads with 8), and a
// read that misses keeps nothing (no copy, no tree); plain LRU kept each
// and evicted the one needed next, hitting never. Sixteen, each seen once
// in the window of sightings, are all read without keeping.
func TestWalkMemoRotation(t *testing.T) {
	defer resetWalks()
	for _, n := range []int{5, 8, 12, 15, 16} {
		resetWalks()
		hits, reads := 0, 0
		for r := range 10 {
			for i := range n {
				page := onePage(i)
				hit, before := keptWalk(page), firstPages()
				if _, err := FromPages([]string{page}, false); err != nil {
					t.Fatal(err)
				}
				if r >= 2 {
					reads++
					if hit {
						hits++
					} else if !slices.Equal(before, firstPages()) {
						t.Fatalf("%d walks in turn, round %d: walk %d missed and was kept", n, r+1, i)
					}
				}
			}
		}
		want := walksKept * 8
		if n >= 16 {
			want = 0 // each read once in the window: none is kept
		}
		if hits != want {
			t.Errorf("%d walks in turn: %d of %d reads hit after two rounds, want %d", n, hits, reads, want)
		}
		if n == 8 && hits*10 < reads*4 {
			t.Errorf("8 walks in turn: %d of %d reads hit", hits, reads)
		}
	}
}

// TestWalkMemoAging: walks that stopped coming (a server that changed) give
// way to a new walk read again and again within 9 reads (half the
// sightings' window and one), which then hits: four walks read 100 times
// in turn, or one read 100 times then three twice, which fill the memo.
func TestWalkMemoAging(t *testing.T) {
	defer resetWalks()
	for name, warm := range map[string][]int{
		"four in turn":    slices.Repeat([]int{1, 2, 3, 4}, 100),
		"one, then three": append(slices.Repeat([]int{1}, 100), 2, 2, 3, 3, 4, 4),
	} {
		resetWalks()
		for _, i := range warm {
			FromPages([]string{onePage(i)}, false)
		}
		if walks.Len() != walksKept {
			t.Fatalf("%s: %d kept", name, walks.Len())
		}
		fresh, reads := onePage(9), 0
		for !keptWalk(fresh) {
			if reads++; reads > 9 {
				t.Fatalf("%s: a new walk read %d times is not kept", name, reads-1)
			}
			FromPages([]string{fresh}, false)
		}
		if _, ok := knownWalk([]string{fresh}, false); !ok {
			t.Fatalf("%s: the new walk, kept, does not hit", name)
		}
		t.Logf("%s: kept after %d reads", name, reads)
	}
}

// TestToolsSHA256: ToolsSHA256 answers what digesting gives, whatever the
// order, for lists that join to the same bytes, and for hashes in a buffer
// changed after a call (a host's).
func TestToolsSHA256(t *testing.T) {
	digest := func(hashes []string) string {
		sorted := slices.Clone(hashes)
		slices.Sort(sorted)
		return hashHex([]byte(strings.Join(sorted, "\n")))
	}
	buf := []byte("b\na")
	lists := [][]string{{"b", "a"}, {"b\na"}, {"a", "b"}, {unsafe.String(&buf[0], 1), unsafe.String(&buf[2], 1)}}
	for round := 0; round < 2; round++ {
		for _, l := range lists {
			if got, want := ToolsSHA256(l), digest(l); got != want {
				t.Fatalf("round %d: ToolsSHA256(%q) = %s, want %s", round, l, got, want)
			}
		}
	}
	l := lists[3]
	ToolsSHA256(l)
	buf[0] = 'c'
	if got, want := ToolsSHA256(l), digest(l); got != want {
		t.Fatalf("ToolsSHA256(%q) after its buffer changed = %s, want %s", l, got, want)
	}
}

// TestKeptListDigest: a walk the memo keeps carries its list digest,
// computed once, which is what digesting its tools gives, on the read that
// kept it and on every hit.
func TestKeptListDigest(t *testing.T) {
	resetWalks()
	defer resetWalks()
	page := onePage(1)
	first, _ := FromPages([]string{page}, false)
	if first.listSHA256 != "" {
		t.Fatal("a walk read once carries a digest")
	}
	for range 3 {
		obs, err := FromPages([]string{page}, false)
		if err != nil || obs.listSHA256 == "" || obs.ListSHA256() != ListSHA256(obs.Tools) || obs.ListSHA256() != first.ListSHA256() {
			t.Fatalf("the kept walk's digest %q, its tools' %q (%v)", obs.listSHA256, ListSHA256(obs.Tools), err)
		}
	}
}
