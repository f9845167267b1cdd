// Package memo is the core's state between calls: every memo the core
// keeps (the parser's long strings and containers, the walks of tools/list
// pages, the parsed lockfiles) is a Table of one Budget, and the Budget is
// all the memory they may hold together.
//
// A memo exists because a host hands an instance the same bytes again and
// again (one server's list every session, one lockfile every check), and
// reading them again was most of a warm check's cost (docs/benchmarks.md).
// It must never change an answer: a Table keeps what reading some bytes
// gave, keyed by those exact bytes, compared in full; only what was read
// without error is kept, so every error is still made by reading.
//
// The rules every Table follows, so that no memo holds them by comment:
//
//   - Its entries are of one type, the memo's own (Table[E]; Untyped for
//     the one memo whose type must stay out of a generic dictionary): no two
//     memos share keys or see each other's entries.
//   - Its keys are Text, which only this package makes, always by copying
//     (Own, OwnAll): a key never points into a request, so an ABI-2
//     attachment (the host's buffer, rewritten after the call) is never a
//     key, and comparing a key with the same string in memory (one pointer,
//     as canon.Same does in WebAssembly) is comparing its bytes.
//   - Its entries cost what they keep alive, estimated from above by the
//     caller (the key's bytes, the trees parsed from them); the Budget
//     evicts the least recently used entry of any Table until the total fits,
//     and refuses an entry larger than a quarter of it.
//   - Admission: a Table may ask Sightings first, so that bytes read once
//     (a changed list, each call of a benchmark) are not kept at all.
//   - Stats: hits, misses, entries kept, refused and evicted, and the bytes
//     held, per Table (Budget.Stats).
//   - A limit of 0 turns every memo off: nothing is kept, every call reads.
//
// An instance (a process natively, one WebAssembly instance, whose memory
// never shrinks) has one Budget, Instance, whose limit is DefaultLimit: small
// enough for a browser tab. A host that checks many lists all day (the
// issuer) sets a larger one for itself (core.SetMemoLimit). docs/abi.md,
// "State", says what an instance keeps.
package memo

import (
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// DefaultLimit is an instance's budget unless its host sets another: the
// walk, the lockfile and the long string of one check of a 1,000-tool list
// (about 1 MB of JSON each, 11 MB kept with their trees), with room for a
// second server's.
const DefaultLimit = 24 << 20

// IssuerLimit is the budget the issuer sets for itself: a service checking
// several clients' lists and lockfiles in turn keeps a few of each.
const IssuerLimit = 128 << 20

// Instance is the instance's budget, which every memo of the core is a
// Table of.
var Instance = NewBudget(DefaultLimit)

// Text is bytes a memo owns: a copy no caller holds a writable reference
// to. Only Own and OwnAll make one.
type Text struct{ s string }

// Own copies s into a Text.
func Own(s string) Text { return Text{strings.Clone(s)} }

// OwnBytes copies b into a Text.
func OwnBytes(b []byte) Text { return Text{string(b)} }

// OwnAll copies ss into Texts of one allocation.
func OwnAll(ss []string) []Text {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range ss {
		b.WriteString(s)
	}
	all := b.String()
	out := make([]Text, len(ss))
	for i, s := range ss {
		out[i], all = Text{all[:len(s)]}, all[len(s):]
	}
	return out
}

// String is the text's bytes, which nothing changes.
func (t Text) String() string { return t.s }

// Len is the text's length.
func (t Text) Len() int { return len(t.s) }

// Slice is t[i:j], owned as t is.
func (t Text) Slice(i, j int) Text { return Text{t.s[i:j]} }

// Budget is the memory the Tables of an instance may hold together.
type Budget struct {
	mu     sync.Mutex // held to change any Table's entries
	limit  int64
	used   int64
	clock  atomic.Uint64 // the recency stamp of the last use
	tables []table
}

// table is what a Budget asks of each of its Tables: functions, not an
// interface, so that no entry type (a parsed lockfile, its times) is made
// reachable through an interface, whose methods the linker would then keep
// in the WebAssembly module.
type table struct {
	oldest      func() (stamp uint64, ok bool) // the stamp of its least recently used entry
	evictOldest func()
	clear       func()
	stats       func() Stats
	list        func(func(print, stamp uint64, cost int64))
}

// NewBudget is a budget of limit bytes (0: memos off).
func NewBudget(limit int64) *Budget { return &Budget{limit: max(limit, 0)} }

// Limit is the budget's limit in bytes.
func (b *Budget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// SetLimit sets the budget to limit bytes (0 turns the memos off), evicting
// what no longer fits.
func (b *Budget) SetLimit(limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = max(limit, 0)
	b.fit(0)
}

// Clear drops every entry of every Table (the stats stay).
func (b *Budget) Clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.tables {
		t.clear()
	}
}

// Used is the bytes the Tables' entries cost now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Stats are the Tables' counts, in the order they were made.
func (b *Budget) Stats() []Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Stats, len(b.tables))
	for i, t := range b.tables {
		out[i] = t.stats()
	}
	return out
}

// fit evicts least recently used entries, of any Table, until room bytes
// more fit in the limit, and reports whether they do. b.mu is held.
func (b *Budget) fit(room int64) bool {
	for b.used+room > b.limit {
		victim, stamp := -1, uint64(0)
		for i, t := range b.tables {
			if s, ok := t.oldest(); ok && (victim < 0 || s < stamp) {
				victim, stamp = i, s
			}
		}
		if victim < 0 {
			return false
		}
		b.tables[victim].evictOldest()
	}
	return true
}

// Stats are one Table's counts.
type Stats struct {
	Name    string
	Entries int
	Bytes   int64 // what its entries cost
	Hits    uint64
	Misses  uint64
	Kept    uint64 // entries admitted
	Refused uint64 // entries not admitted (too large, not seen often enough, memos off)
	Evicted uint64
}

// Options shape a Table.
type Options struct {
	// MaxEntries bounds the entries (each lookup compares with each).
	MaxEntries int
	// Sightings: keep only what was read often (Sightings); otherwise
	// whatever was read and fits.
	Sightings bool
}

// Table is one memo: values of type E, each with its cost, under a Budget.
// Lookups take no lock: they read a snapshot of the entries, which changes
// replace.
//
// Only the handing in and out of values is generic; the entries and all
// the work are not (slots): a generic type's dictionary marks its type
// arguments as used in an interface, and the linker then keeps every
// method of every type they reach (a parsed lockfile reaches time.Time,
// whose formatting was 41 KB of the WebAssembly module), and each value
// type's instantiation is a copy of the code. A value is held as the
// pointer its caller made.
type Table[E any] struct{ *slots }

// slots is a Table's entries and counts.
type slots struct {
	id      int // its index in budget.tables
	label   string
	budget  *Budget
	opts    Options
	entries atomic.Pointer[[]*slot] // newest first; replaced, never changed
	seen    Sightings
	bytes   int64 // under budget.mu

	hits, misses, kept, refused, evicted atomic.Uint64
}

// slot is one kept value (a *E of its Table) and what it costs.
type slot struct {
	v     unsafe.Pointer
	print uint64
	cost  int64
	used  atomic.Uint64
	gone  atomic.Bool
}

// Entry is a kept value of a Table[E].
type Entry[E any] struct{ s *slot }

// Value is the kept value, which nothing may change.
func (e Entry[E]) Value() *E { return (*E)(e.s.v) }

// NewTable makes a Table of b named name (its Stats' name).
func NewTable[E any](b *Budget, name string, o Options) Table[E] {
	t := &slots{label: name, budget: b, opts: o}
	b.mu.Lock()
	defer b.mu.Unlock()
	t.id = len(b.tables)
	b.tables = append(b.tables, table{oldest: t.oldest, evictOldest: t.evictOldest, clear: t.clear, stats: t.stats, list: t.list})
	return Table[E]{t}
}

// Find answers the newest value match accepts, counting a hit (and a
// sighting of it) or a miss.
func (t Table[E]) Find(match func(*E) bool) (Entry[E], bool) {
	s := t.find(func(p unsafe.Pointer) bool { return match((*E)(p)) })
	return Entry[E]{s}, s != nil
}

// Each calls f with each entry, newest first, until it answers false; it
// counts nothing (a caller that finds one with it calls Used).
func (t Table[E]) Each(f func(Entry[E]) bool) {
	t.each(func(s *slot) bool { return f(Entry[E]{s}) })
}

// Used notes a use of e found with Each: a hit.
func (t Table[E]) Used(e Entry[E]) { t.use(e.s) }

// Keep keeps v, which costs cost bytes, with the fingerprint f of its key,
// seen times sighted (Note; ignored without Options.Sightings), and reports
// whether it did. *v must not be changed afterwards: lookups share it.
func (t Table[E]) Keep(v *E, cost int64, f uint64, seen int) (Entry[E], bool) {
	s := t.keep(unsafe.Pointer(v), cost, f, seen)
	return Entry[E]{s}, s != nil
}

// Charge adds cost bytes to e's, for what was kept beside it afterwards,
// evicting least recently used entries (e among them, if it is) to fit,
// and reports whether e is still kept.
func (t Table[E]) Charge(e Entry[E], cost int64) bool { return t.charge(e.s, cost) }

// Untyped is a Table whose values are handed in and out as pointers: for
// a value whose type must not reach a generic dictionary, because it reaches
// a type with methods the WebAssembly module does not otherwise need (a
// parsed lockfile reaches time.Time: 41 KB of formatting). The caller
// converts the pointers back to the one type it keeps.
type Untyped struct{ *slots }

// NewUntyped makes an Untyped Table of b named name.
func NewUntyped(b *Budget, name string, o Options) Untyped {
	return Untyped{NewTable[struct{}](b, name, o).slots}
}

// Find answers the newest value match accepts, as Table.Find.
func (t Untyped) Find(match func(unsafe.Pointer) bool) (unsafe.Pointer, bool) {
	s := t.find(match)
	if s == nil {
		return nil, false
	}
	return s.v, true
}

// Keep keeps the value at v, as Table.Keep.
func (t Untyped) Keep(v unsafe.Pointer, cost int64, f uint64, seen int) bool {
	return t.keep(v, cost, f, seen) != nil
}

func (t *slots) find(match func(unsafe.Pointer) bool) *slot {
	if es := t.entries.Load(); es != nil {
		for _, s := range *es {
			if match(s.v) {
				t.use(s)
				if t.opts.Sightings {
					t.seen.Note(s.print)
				}
				return s
			}
		}
	}
	t.misses.Add(1)
	return nil
}

func (t *slots) each(f func(*slot) bool) {
	if es := t.entries.Load(); es != nil {
		for _, s := range *es {
			if !f(s) {
				return
			}
		}
	}
}

func (t *slots) use(s *slot) {
	t.hits.Add(1)
	s.used.Store(t.budget.clock.Add(1))
}

// Note notes a sighting of the fingerprint f (a read of bytes the Table
// could keep) and answers how many of the window's were of f.
func (t *slots) Note(f uint64) int { return t.seen.Note(f) }

// Admits reports whether Keep would keep an entry of cost bytes seen times
// sighted, as things are now: a caller asks it before it makes the copy an
// entry needs (or measures what it costs), with an estimate of the cost from
// below. A refusal counts as Keep's would.
func (t *slots) Admits(cost int64, seen int) bool {
	b := t.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if cost > b.limit/4 || !t.admits(cost, seen) {
		t.refused.Add(1)
		return false
	}
	return true
}

func (t *slots) keep(v unsafe.Pointer, cost int64, f uint64, seen int) *slot {
	b := t.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if cost > b.limit/4 || !t.admits(cost, seen) {
		t.refused.Add(1)
		return nil
	}
	s := &slot{v: v, print: f, cost: cost}
	s.used.Store(b.clock.Add(1))
	if es := t.entries.Load(); es != nil && len(*es) >= t.opts.MaxEntries {
		t.evictOldest()
	}
	if !b.fit(cost) {
		t.refused.Add(1)
		return nil
	}
	next := []*slot{s}
	if es := t.entries.Load(); es != nil {
		next = append(next, *es...)
	}
	t.entries.Store(&next)
	t.bytes += cost
	b.used += cost
	t.kept.Add(1)
	return s
}

func (t *slots) charge(s *slot, cost int64) bool {
	b := t.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.gone.Load() {
		return false
	}
	s.cost += cost
	t.bytes += cost
	b.used += cost
	b.fit(0)
	return !s.gone.Load()
}

// admits: the entries an entry of cost bytes would evict (of this Table
// beyond MaxEntries, of any beyond the limit) were each read at least two
// times less often than it. b.mu is held.
func (t *slots) admits(cost int64, seen int) bool {
	if !t.opts.Sightings {
		return true
	}
	// Which entries fitting it would evict, oldest first: a dry run of
	// fit, over stamps only.
	var evicts []uint64
	es := t.entries.Load()
	if es != nil && len(*es) >= t.opts.MaxEntries {
		evicts = append(evicts, oldestOf(*es).print)
	}
	if t.budget.used+cost > t.budget.limit {
		for _, e := range t.budget.lru(t.budget.used + cost - t.budget.limit) {
			if e.table == t.id {
				evicts = append(evicts, e.print)
			}
		}
	}
	return t.seen.Admits(seen, evicts...)
}

// victim is an entry fit would evict, for admission.
type victim struct {
	table int // its Table's id
	print uint64
}

// lru lists the least recently used entries of every Table whose costs
// reach need bytes. b.mu is held.
func (b *Budget) lru(need int64) []victim {
	type cand struct {
		v     victim
		stamp uint64
		cost  int64
	}
	var all []cand
	for i, t := range b.tables {
		t.list(func(print, stamp uint64, cost int64) {
			all = append(all, cand{victim{i, print}, stamp, cost})
		})
	}
	var out []victim
	for need > 0 && len(all) > 0 {
		k := 0
		for i := range all {
			if all[i].stamp < all[k].stamp {
				k = i
			}
		}
		out = append(out, all[k].v)
		need -= all[k].cost
		all = append(all[:k], all[k+1:]...)
	}
	return out
}

func (t *slots) list(f func(print, stamp uint64, cost int64)) {
	if es := t.entries.Load(); es != nil {
		for _, s := range *es {
			f(s.print, s.used.Load(), s.cost)
		}
	}
}

func oldestOf(es []*slot) *slot {
	o := es[0]
	for _, s := range es[1:] {
		if s.used.Load() < o.used.Load() {
			o = s
		}
	}
	return o
}

func (t *slots) oldest() (uint64, bool) {
	es := t.entries.Load()
	if es == nil || len(*es) == 0 {
		return 0, false
	}
	return oldestOf(*es).used.Load(), true
}

// evictOldest drops the least recently used entry. b.mu is held.
func (t *slots) evictOldest() {
	es := t.entries.Load()
	if es == nil || len(*es) == 0 {
		return
	}
	o := oldestOf(*es)
	next := make([]*slot, 0, len(*es)-1)
	for _, s := range *es {
		if s != o {
			next = append(next, s)
		}
	}
	t.entries.Store(&next)
	o.gone.Store(true)
	t.bytes -= o.cost
	t.budget.used -= o.cost
	t.evicted.Add(1)
}

func (t *slots) clear() {
	for {
		if es := t.entries.Load(); es == nil || len(*es) == 0 {
			return
		}
		t.evictOldest()
	}
}

func (t *slots) stats() Stats {
	n := 0
	if es := t.entries.Load(); es != nil {
		n = len(*es)
	}
	return Stats{Name: t.label, Entries: n, Bytes: t.bytes, Hits: t.hits.Load(), Misses: t.misses.Load(),
		Kept: t.kept.Load(), Refused: t.refused.Load(), Evicted: t.evicted.Load()}
}

// Len is how many entries the Table keeps.
func (t *slots) Len() int {
	if es := t.entries.Load(); es != nil {
		return len(*es)
	}
	return 0
}

// Clear drops the Table's entries and forgets its sightings.
func (t *slots) Clear() {
	t.budget.mu.Lock()
	defer t.budget.mu.Unlock()
	t.clear()
	t.seen.clear()
}

// Stats are the Table's counts.
func (t *slots) Stats() Stats {
	t.budget.mu.Lock()
	defer t.budget.mu.Unlock()
	return t.stats()
}
