package canon

import (
	"sync"
	"sync/atomic"
	"unsafe"
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
// document the parser owns is kept from (Parse copies its input;
// ParseString may be handed a host's buffer, an ABI-2 attachment, which the
// host reuses after the call), and only one of at most containerDocMax
// bytes: the memo keeps at most containersKept of them alive, 16 MB of text
// and their trees, in an instance whose memory never shrinks (WebAssembly).
// Lookups take no lock: they read a snapshot of the entries, which writers
// replace (a page of 1,000 tools looks up each tool object, and misses).
//
// What else a caller computes from a kept tree (the tools package's hashes)
// may be kept beside it (Derived, KeepDerived), so it is bounded by, and
// goes with, the container it was computed from.
var containers struct {
	mu      sync.Mutex
	entries atomic.Pointer[[]*container] // most recently used first; replaced, never changed
	seen    Sightings
}

type container struct {
	raw     string // the container's bytes, a part of an owned document
	depth   int
	print   uint64 // Fingerprint(raw, depthNames[depth])
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
	es := containers.entries.Load()
	if es == nil {
		return Value{}, false
	}
	rest := p.s[p.i:]
	for _, e := range *es {
		if e.depth == depth && len(e.raw) <= len(rest) && Same(rest[:len(e.raw)], e.raw) {
			p.i += len(e.raw)
			p.dirty += e.dirty
			containers.seen.Note(e.print)
			touch(e)
			return e.v, true
		}
	}
	return Value{}, false
}

// keepContainer remembers the array or object v just parsed from
// p.s[start:p.i] at depth, mark being p.dirty at its start, when Sightings
// admits it.
func (p *parser) keepContainer(v Value, depth, start, mark int) {
	if !p.owned || depth < containerDepthMin || depth > containerDepthMax || p.i-start < containerMin || len(p.s) > containerDocMax {
		return
	}
	raw := p.s[start:p.i]
	f := Fingerprint(raw, depthNames[depth])
	seen := containers.seen.Note(f)
	containers.mu.Lock()
	defer containers.mu.Unlock()
	var es []*container
	if old := containers.entries.Load(); old != nil {
		es = *old
	}
	var evicts []uint64
	if len(es) == containersKept {
		evicts = append(evicts, es[len(es)-1].print)
	}
	if !containers.seen.Admits(seen, evicts...) {
		return
	}
	e := &container{raw: raw, depth: depth, print: f, v: v, dirty: p.dirty - mark}
	next := append([]*container{e}, es[:min(len(es), containersKept-1)]...)
	containers.entries.Store(&next)
}

// touch makes e the most recently used entry, if it is still kept.
func touch(e *container) {
	containers.mu.Lock()
	defer containers.mu.Unlock()
	old := containers.entries.Load()
	if old == nil || (*old)[0] == e {
		return
	}
	next := make([]*container, 0, len(*old))
	next = append(next, e)
	found := false
	for _, x := range *old {
		if x == e {
			found = true
		} else {
			next = append(next, x)
		}
	}
	if found {
		containers.entries.Store(&next)
	}
}

// keptContainer is the entry whose tree is v, if v is one kept: the same
// elements or members, which the entry keeps alive and nothing changes.
func keptContainer(v Value) *container {
	if v.kind != Array && v.kind != Object || len(v.s) == 0 {
		return nil
	}
	es := containers.entries.Load()
	if es == nil {
		return nil
	}
	for _, e := range *es {
		if e.v.kind == v.kind && len(e.v.s) == len(v.s) && unsafe.StringData(e.v.s) == unsafe.StringData(v.s) {
			return e
		}
	}
	return nil
}

// Derived answers what a caller kept beside the container memo's tree v
// under key (KeepDerived): something computed from v alone, which v's bytes
// determine. ok is false when v is not a kept tree or nothing is kept for
// key. The caller must not change what it is given.
func Derived(v Value, key string) (any, bool) {
	e := keptContainer(v)
	if e == nil {
		return nil, false
	}
	d := e.derived.Load()
	if d == nil || d.key != key {
		return nil, false
	}
	touch(e)
	return d.v, true
}

// KeepDerived keeps x beside the container memo's tree v under key, when v
// is one kept (one thing per tree: the last kept), and reports whether it
// did; x must be computed from v alone, and is never changed afterwards.
func KeepDerived(v Value, key string, x any) bool {
	e := keptContainer(v)
	if e != nil {
		e.derived.Store(&derivedValue{key, x})
	}
	return e != nil
}
