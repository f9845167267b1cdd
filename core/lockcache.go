package core

import (
	"time"
	"unsafe"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/memo"
)

// The lockfile cache.
//
// A host checks the same server again and again against one lockfile (every
// re-check on list_changed), and parsing and digesting an 0.8 MB lockfile of
// 1,000 tools is a fifth of a native check and more of a wasm one. So the
// ops that only read a lockfile (verify_lock, lock_check, continuity_check)
// keep the last few they parsed, so that a host which reads the lockfile
// with verify_lock before it checks (the CLI, the Go preflight) parses it
// once, keyed by their exact bytes, with their digests computed:
// the same bytes parse to the same lock.File, so a hit gives the answer a
// parse would. What is cached is never changed afterwards, and only a
// lockfile that parsed is cached: every error is still made by parsing.
// A lockfile given as a JSON value (no bytes to key by) is parsed each time.
//
// The cache is state inside an instance (a Table of core/memo's budget:
// a lockfile costs its text and its parse, lockCost), and it must never
// change an answer's bytes: hosttest's differential test asks every case
// twice, with the cache cold and warm, and the memory test runs every vector
// seven times over on one instance.
//
// It is an Untyped Table: a generic Table's dictionary would carry
// cachedLock's type, through lock.File to time.Time, whose formatting the
// WebAssembly module would then link (41 KB).
var lockCache = memo.NewUntyped(memo.Instance, "lockfiles", memo.Options{MaxEntries: lockCacheSize})

// lockCacheSize is how many lockfiles are kept; lockCacheBytes caps the
// bytes of one.
const (
	lockCacheSize  = 4
	lockCacheBytes = 16 << 20
)

type cachedLock struct {
	text memo.Text
	file lock.File
}

// parseLockShared is parseLock for an op that only reads the lockfile: it
// may return one shared with earlier calls, which it must not change.
func parseLockShared(rd *req.Reader, field string) lock.File {
	if rd.Failed() {
		return lock.File{}
	}
	text, ok, err := rd.O.DocText(field)
	if err != nil || !ok || len(text) > lockCacheBytes {
		return parseLock(rd, field)
	}
	if f, hit := cachedLockFile(text); hit {
		return f
	}
	// Parsed from a copy, so the cache does not keep the request alive;
	// the long-string memo's text is already one, never changed, and kept
	// as it is, the next check's lookups compare one pointer (canon.Same).
	owned, shared := canon.KeptText(text)
	if !shared {
		owned = memo.Own(text)
	}
	doc, err := canon.ParseString(owned.String())
	if err != nil {
		return parseLock(rd, field) // the error as parseLock words it
	}
	f, err := lock.Parse(doc)
	if err != nil {
		return parseLock(rd, field)
	}
	if f.Crawlcheck != nil {
		f.Crawlcheck.KeepDigests()
	}
	lockCache.Keep(unsafe.Pointer(&cachedLock{owned, f}), lockCost(owned, doc, shared), 0, 0)
	return f
}

// lockCost is an estimate from above of what a parsed lockfile keeps
// alive: its text (unless the long-string memo's, which that pays for), its
// tree, and what lock.Parse built from the tree (entries and maps of
// strings the tree holds, with their digests: under twice the tree's size
// again, as TestStateBounded measures).
func lockCost(text memo.Text, doc canon.Value, shared bool) int64 {
	n := 3 * canon.Footprint(doc, text.String())
	if !shared {
		n += int64(text.Len())
	}
	return n
}

func cachedLockFile(text string) (lock.File, bool) {
	p, ok := lockCache.Find(func(p unsafe.Pointer) bool {
		return canon.Same((*cachedLock)(p).text.String(), text) // not ==: word by word in wasm
	})
	if !ok {
		return lock.File{}, false
	}
	return (*cachedLock)(p).file, true
}

// lockDigestShared is lockAndDigest's digest for an op that keeps only the
// digest (sign_receipt, which an issuer runs on every check of one
// lockfile): a lockfile in the cache is not parsed and digested again. A
// miss is lockAndDigest itself, so every error is worded as it words it;
// a hit is the digest it would compute (guard.LockDigest is this
// VerifyBaseline's Digest of the parsed lockfile).
func lockDigestShared(rd *req.Reader, field string) string {
	if !rd.Failed() {
		if text, ok, err := rd.O.DocText(field); err == nil && ok {
			if f, hit := cachedLockFile(text); hit {
				return continuity.VerifyBaseline(f, sig.Keys{}, false, time.Time{}).Digest
			}
		}
	}
	_, d := lockAndDigest(rd, field)
	return d
}
