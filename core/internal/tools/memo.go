package tools

import (
	"slices"
	"strings"
	"sync"

	"github.com/crawlcheck/verifier/core/internal/canon"
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
// pages are parsed from the memo's own copy of their bytes, so neither the
// tree nor the tools point into a request (an ABI-2 attachment is the
// host's buffer, reused after the call).
var walks = struct {
	mu      sync.Mutex
	entries []walk // most recently used first
	bytes   int    // the page bytes the entries hold
	seen    canon.Sightings
}{}

type walk struct {
	pages  []string // the pages' bytes, owned (one allocation)
	print  uint64   // canon.Fingerprint(pages...)
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
// walk (a 1,000-tool page is 1.1 MB) and walksMax those of all, so the memo
// holds at most 8 MB of pages, with the trees parsed from them and their
// tools (about four times the bytes for a typical list), in an instance
// whose memory never shrinks (WebAssembly). Nothing in it grows with the
// number of calls.
const (
	walksKept = 4
	walkMax   = 4 << 20
	walksMax  = 8 << 20
)

// knownWalk answers what reading pages gave, when they are a walk kept.
func knownWalk(pages []string, capped bool) (Observed, bool) {
	walks.mu.Lock()
	defer walks.mu.Unlock()
	for i, e := range walks.entries {
		if e.capped == capped && samePages(e.pages, pages) {
			copy(walks.entries[1:i+1], walks.entries[:i])
			walks.entries[0] = e
			walks.seen.Note(e.print)
			obs := e.obs
			obs.Tools = slices.Clone(obs.Tools)
			return obs, true
		}
	}
	return Observed{}, false
}

func samePages(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
	}
	for i := range a {
		if !canon.Same(a[i], b[i]) {
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

// ownPages copies the pages into one allocation, so the memo keeps no
// request alive and no attachment's buffer.
func ownPages(pages []string) []string {
	var b strings.Builder
	b.Grow(pagesBytes(pages))
	for _, p := range pages {
		b.WriteString(p)
	}
	all := b.String()
	owned := make([]string, len(pages))
	for i, p := range pages {
		owned[i], all = all[:len(p)], all[len(p):]
	}
	return owned
}

// PageCursor answers ParsePage's cursor and hasCursor for a page that is
// one of a kept walk's, which parsed: a host asks next_page of each page it
// reads, the same page every session, before the check reads the walk.
func PageCursor(page string) (cursor string, hasCursor, ok bool) {
	walks.mu.Lock()
	defer walks.mu.Unlock()
	for i, e := range walks.entries {
		for k, p := range e.pages {
			if e.ends[k].read && len(p) == len(page) && canon.Same(p, page) {
				copy(walks.entries[1:i+1], walks.entries[:i])
				walks.entries[0] = e
				return e.ends[k].cursor, e.ends[k].more, true
			}
		}
	}
	return "", false, false
}

// admitsWalk reports whether a walk of n page bytes with fingerprint f,
// not kept, is to be kept: it notes the sighting, and asks canon.Sightings
// with the entries keeping it would evict.
func admitsWalk(f uint64, n int) bool {
	seen := walks.seen.Note(f)
	walks.mu.Lock()
	defer walks.mu.Unlock()
	var evicts []uint64
	kept, bytes := len(walks.entries)+1, walks.bytes+n
	for i := len(walks.entries) - 1; i >= 0 && (kept > walksKept || bytes > walksMax); i-- {
		evicts = append(evicts, walks.entries[i].print)
		kept, bytes = kept-1, bytes-pagesBytes(walks.entries[i].pages)
	}
	return walks.seen.Admits(seen, evicts...)
}

// keepWalk remembers a walk read from owned pages (ownPages); w.obs is the
// memo's from then on, so the caller hands out a copy of its tools.
func keepWalk(w walk) {
	n := pagesBytes(w.pages)
	walks.mu.Lock()
	defer walks.mu.Unlock()
	walks.entries = append([]walk{w}, walks.entries...)
	walks.bytes += n
	for len(walks.entries) > walksKept || walks.bytes > walksMax {
		walks.bytes -= pagesBytes(walks.entries[len(walks.entries)-1].pages)
		walks.entries[len(walks.entries)-1] = walk{}
		walks.entries = walks.entries[:len(walks.entries)-1]
	}
}

// The list digest memo.
//
// listDigests (ToolsSHA256's) remembers the last few lists ToolsSHA256 digested, by their
// exact hashes in their order: an issuer checks one list again and again,
// and sorting, joining and hashing its hashes was a third of its lock
// check's own work. The same strings in the same order digest the same, so
// a hit is what digesting would give.
var listDigests listMemo

// listDigestsKept is how many lists are kept; listDigestMax caps the hashes
// of one (a 10,000-tool list keeps 640 KB alive).
const (
	listDigestsKept = 4
	listDigestMax   = 10000
)

type listMemo struct {
	mu      sync.Mutex
	entries []listDigest // most recently used first
}

type listDigest struct {
	hashes []string // parts of one string of the core's own
	digest string
}

func (m *listMemo) get(hashes []string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, e := range m.entries {
		if slices.Equal(e.hashes, hashes) {
			copy(m.entries[1:i+1], m.entries[:i])
			m.entries[0] = e
			return e.digest, true
		}
	}
	return "", false
}

// put keeps hashes, copied: a lockfile's hashes may be parts of a host's
// buffer, which it reuses after the call.
func (m *listMemo) put(hashes []string, digest string) {
	if len(hashes) == 0 || len(hashes) > listDigestMax {
		return
	}
	kept := ownPages(hashes) // one allocation of their own, as a walk's pages
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append([]listDigest{{kept, digest}}, m.entries[:min(len(m.entries), listDigestsKept-1)]...)
}
