package tools

import (
	"slices"
	"unsafe"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/memo"
)

// The walk memo.
//
// A long-lived instance is handed the same tools/list pages again and
// again: a warm process opening sessions against one server gets the same
// result bytes every session, and a re-check of a server that did not
// change gets the page it got before. Parsing and hashing those bytes was
// most of what a warm session's check cost (docs/benchmarks.md). So
// FromPages keeps the last few walks it read, keyed by their exact bytes and
// by pageCapReached (the one other fact its answer depends on), with what
// reading them gave. The key is compared in full, page by page and byte by
// byte (canon.Same), never by a hash standing in for the bytes, so no
// collision can change an answer; a page that differs in one byte is read
// whole. The same bytes parse and hash to the same tools, so a hit answers
// what reading would. Only a walk read without error is kept: every error is
// still made by reading. Which walks are kept is decided by how often each
// was read (canon.Sightings; every read is a sighting, a hit too): one read
// once only would cost a copy and collector time while it is kept, and one
// read less often than those it would evict would evict the walk needed
// next.
//
// What is kept is never changed afterwards: a hit hands out its own copy
// of the tools (a Tool computes its part hashes on first use), and the
// pages are parsed from the memo's own copy of their bytes (memo.OwnAll),
// so neither the tree nor the tools point into a request (an ABI-2
// attachment is the host's buffer, reused after the call). A walk costs its
// pages, the trees parsed from them and its tools (walkCost) in the
// instance's budget (core/memo).
var walks = memo.NewTable[walk](memo.Instance, "walks", memo.Options{MaxEntries: walksKept, Sightings: true})

type walk struct {
	pages  []memo.Text // the pages' bytes (one allocation)
	capped bool
	obs    Observed
	ends   []pageEnd // each page's cursor, as ParsePage reads it
}

// pageEnd is what ParsePage said of a page's nextCursor; read is false for
// a page after the walk stopped, which was not parsed.
type pageEnd struct {
	cursor     string
	more, read bool
}

// walksKept is how many walks are kept; walkMax caps the page bytes of one
// walk (a 1,000-tool page is 1.1 MB).
const (
	walksKept = 4
	walkMax   = 4 << 20
)

// knownWalk answers what reading pages gave, when they are a walk kept.
func knownWalk(pages []string, capped bool) (Observed, bool) {
	e, ok := walks.Find(func(w *walk) bool { return w.capped == capped && samePages(w.pages, pages) })
	if !ok {
		return Observed{}, false
	}
	obs := e.Value().obs
	obs.Tools = slices.Clone(obs.Tools)
	return obs, true
}

func samePages(a []memo.Text, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Len() != len(b[i]) {
			return false
		}
	}
	for i := range a {
		if !canon.Same(a[i].String(), b[i]) {
			return false
		}
	}
	return true
}

// pagesBytes is the bytes of pages together.
func pagesBytes(pages []string) int {
	n := 0
	for _, p := range pages {
		n += len(p)
	}
	return n
}

// PageCursor answers ParsePage's cursor and hasCursor for a page that is
// one of a kept walk's, which parsed: a host asks next_page of each page it
// reads, the same page every session, before the check reads the walk.
func PageCursor(page string) (cursor string, hasCursor, ok bool) {
	var end pageEnd
	_, ok = walks.Find(func(w *walk) bool {
		for k, p := range w.pages {
			if w.ends[k].read && p.Len() == len(page) && canon.Same(p.String(), page) {
				end = w.ends[k]
				return true
			}
		}
		return false
	})
	return end.cursor, end.more, ok
}

// NoteOnePageWalk notes a sighting of the walk that is page alone: next_page
// parsed it, and it ends its walk where it starts (no nextCursor, no cursor
// followed before it). That read is a sighting as PageCursor's hit is one.
// A host asks next_page of each page, then hands the walk to ui_templates
// and to the check: with this sighting the first of them keeps the walk and
// the check finds it, where a process that reads the list once (the CLI)
// parsed and hashed it twice and kept it for nothing.
func NoteOnePageWalk(page string) { walks.Note(canon.Fingerprint(page)) }

// walkCost is an estimate from above of what a walk keeps alive: its pages,
// the trees of its tools parsed from them, and the tools.
func walkCost(w *walk) int64 {
	n := int64(0)
	docs := make([]string, len(w.pages))
	for i, p := range w.pages {
		n += int64(p.Len())
		docs[i] = p.String()
	}
	return n + toolsCost(w.obs.Tools, docs...)
}

// toolsCost is what hashed tools keep alive beyond the documents docs
// their trees point into: each Tool, its hash and its tree.
func toolsCost(ts []Tool, docs ...string) int64 {
	n := int64(0)
	for i := range ts {
		n += int64(unsafe.Sizeof(Tool{})) + int64(len(ts[i].SHA256)) + canon.Footprint(ts[i].raw, docs...)
	}
	return n
}

// hashedCost is what hashed tools keep alive beside the tree they were
// hashed from (canon.KeepDerived, which the tree is charged to already):
// each Tool and its hash.
func hashedCost(ts []Tool) int64 {
	n := int64(0)
	for i := range ts {
		n += int64(unsafe.Sizeof(Tool{})) + int64(len(ts[i].SHA256))
	}
	return n
}
