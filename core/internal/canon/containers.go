package canon

import (
	"sync/atomic"
	"unsafe"

	"github.com/crawlcheck/verifier/core/memo"
)

// The container memo.
//
// An issuer checks the same tool list against the same lockfile again and
// again, and each check's request holds the list as a JSON value inside it
// (a receipt keeps its inputs as given, so they cannot travel as
// attachments): parsing that list again was a fifth of the issuer's CPU per
// check (docs/benchmarks.md). So the parser keeps the last few long arrays
// and objects it parsed near the top of a document (nesting depth 2 and 3: a
// request's inputs, its tools, a page's tools), keyed by their exact bytes
// and the depth they were parsed at, with the tree they gave and how many
// non-canonical things the parser read inside them (dirty). Where the input
// at an array's or object's start holds a kept one's bytes, parsing would
// read exactly those bytes — a JSON array or object ends at the bracket
// that closes it, which depends only on the bytes before it — and give the
// same tree at the same depth, so the kept tree is taken instead. The bytes
// are compared in full (Same), never by a hash standing in for them. Only a
// container parsed without error is kept, so every error is still made by
// parsing. What is kept is decided by how often it was read (Sightings):
// every container the memo could keep and every hit is a sighting.
//
// A kept tree points into the document it was parsed from, so only a
// document the parser owns is kept from (Parse copies its input into a
// memo.Text; ParseString may be handed a host's buffer, an ABI-2
// attachment, which the host reuses after the call), and only one of at
// most containerDocMax bytes. An entry costs that whole document and its
// tree (Footprint), with what is kept beside it (KeepDerived), in the
// instance's budget (core/memo). Lookups take no lock: they read a snapshot
// of the entries (a page of 1,000 tools looks up each tool object, and
// misses).
//
// What else a caller computes from a kept tree (the tools package's hashes)
// may be kept beside it (Derived, KeepDerived), so it is bounded by, and
// goes with, the container it was computed from.
var containers = memo.NewTable[container](memo.Instance, "containers", memo.Options{MaxEntries: containersKept, Sightings: true})

type container struct {
	raw     memo.Text // the container's bytes, a part of an owned document
	depth   int
	v       Value
	dirty   int
	derived atomic.Pointer[derivedValue]
}

type derivedValue struct {
	key string
	v   any
}

// containerMin is the length from which an array or object is kept (below
// it, parsing costs about what keeping does); containerDocMax caps the
// document it may be kept from, all of which the tree keeps alive.
const (
	containerMin      = 16 << 10
	containerDocMax   = 4 << 20
	containersKept    = 4
	containerDepthMin = 2
	containerDepthMax = 3
)

// depthNames name the depths containers are kept at, for their fingerprint.
var depthNames = [...]string{containerDepthMin: "2", containerDepthMax: "3"}

// knownContainer takes the array or object starting at p.i from the memo,
// when its bytes are a kept one's at the same depth.
func (p *parser) knownContainer(depth int) (Value, bool) {
	if depth < containerDepthMin || depth > containerDepthMax || len(p.s)-p.i < containerMin {
		return Value{}, false
	}
	rest := p.s[p.i:]
	e, ok := containers.Find(func(c *container) bool {
		raw := c.raw.String()
		return c.depth == depth && len(raw) <= len(rest) && Same(rest[:len(raw)], raw)
	})
	if !ok {
		return Value{}, false
	}
	c := e.Value()
	p.i += c.raw.Len()
	p.dirty += c.dirty
	return c.v, true
}

// keepContainer remembers the array or object v just parsed from
// p.s[start:p.i] at depth, mark being p.dirty at its start, when the memo
// admits it.
func (p *parser) keepContainer(v Value, depth, start, mark int) {
	if p.doc.Len() == 0 || depth < containerDepthMin || depth > containerDepthMax || p.i-start < containerMin || len(p.s) > containerDocMax {
		return
	}
	raw := p.doc.Slice(start, p.i)
	f := Fingerprint(raw.String(), depthNames[depth])
	seen := containers.Note(f)
	// Admission first, on the document's length (the least it costs): the
	// tree's footprint is a walk of it, not to be taken for every container
	// read once.
	if !containers.Admits(int64(p.doc.Len()), seen) {
		return
	}
	containers.Keep(&container{raw: raw, depth: depth, v: v, dirty: p.dirty - mark}, int64(p.doc.Len())+Footprint(v, p.doc.String()), f, seen)
}

// keptContainer is the entry whose tree is v, if v is one kept: the same
// elements or members, which the entry keeps alive and nothing changes.
func keptContainer(v Value) (memo.Entry[container], bool) {
	if v.kind != Array && v.kind != Object || len(v.s) == 0 {
		return memo.Entry[container]{}, false
	}
	var kept memo.Entry[container]
	found := false
	containers.Each(func(e memo.Entry[container]) bool {
		c := e.Value()
		if c.v.kind == v.kind && len(c.v.s) == len(v.s) && unsafe.StringData(c.v.s) == unsafe.StringData(v.s) {
			kept, found = e, true
		}
		return !found
	})
	return kept, found
}

// Kept reports whether v is a tree the container memo keeps, beside which
// KeepDerived would keep something.
func Kept(v Value) bool {
	e, ok := keptContainer(v)
	return ok && e.Value().derived.Load() == nil
}

// Derived answers what a caller kept beside the container memo's tree v
// under key (KeepDerived): something computed from v alone, which v's bytes
// determine. ok is false when v is not a kept tree or nothing is kept for
// key. The caller must not change what it is given.
func Derived(v Value, key string) (any, bool) {
	e, ok := keptContainer(v)
	if !ok {
		return nil, false
	}
	d := e.Value().derived.Load()
	if d == nil || d.key != key {
		return nil, false
	}
	containers.Used(e)
	return d.v, true
}

// KeepDerived keeps x, which costs cost bytes, beside the container memo's
// tree v under key, when v is one kept (one thing per tree: the first kept),
// and reports whether it did; x must be computed from v alone, and is never
// changed afterwards.
func KeepDerived(v Value, key string, x any, cost int64) bool {
	e, ok := keptContainer(v)
	if !ok || e.Value().derived.Load() != nil {
		return false
	}
	e.Value().derived.Store(&derivedValue{key, x})
	return containers.Charge(e, cost)
}

// Footprint is an estimate from above of the bytes v's tree keeps alive
// beyond the documents docs it was parsed from: each value and member, and
// the bytes of every string that is not a part of one of docs (an
// unescaped string is a copy of its own).
func Footprint(v Value, docs ...string) int64 {
	n := int64(unsafe.Sizeof(Value{}))
	switch v.kind {
	case Array:
		for _, e := range v.arr() {
			n += Footprint(e, docs...)
		}
	case Object:
		for _, m := range v.obj() {
			n += int64(unsafe.Sizeof(Member{})-unsafe.Sizeof(Value{})) + outside(m.Key, docs) + Footprint(m.Value, docs...)
		}
	default:
		n += outside(v.s, docs)
	}
	return n
}

// outside is len(s) unless s lies within one of docs.
func outside(s string, docs []string) int64 {
	if len(s) == 0 {
		return 0
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, d := range docs {
		if len(d) == 0 {
			continue
		}
		start := uintptr(unsafe.Pointer(unsafe.StringData(d)))
		if p >= start && p+uintptr(len(s)) <= start+uintptr(len(d)) {
			return 0
		}
	}
	return int64(len(s))
}
