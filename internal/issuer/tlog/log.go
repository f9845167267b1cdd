package tlog

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/crawlcheck/verifier/core/merkle"
)

// Store is where the log lives (store.Store's Log* methods). One sequencer:
// LogAppend takes the store's log lock (on PostgreSQL an advisory
// transaction lock, on SQLite the write lock) for the whole step, so two
// instances sharing a database append one after the other and never fork
// the tree, and a step that dies before its commit leaves nothing behind.
type Store interface {
	HashReader
	// LogAppend appends entries in one transaction: under the sequencer
	// lock it reads the size, writes the entries and their nodes (NewNodes),
	// asks sign for the checkpoint of the new tree and stores it. It
	// answers the index of the first entry and that checkpoint.
	LogAppend(ctx context.Context, entries [][]byte, sign func(size uint64, root Hash) (string, error)) (first uint64, checkpoint string, err error)
	// LogCheckpoint is the newest checkpoint ("" for an empty log).
	LogCheckpoint(ctx context.Context) (string, error)
	// LogEntries reads count entries from index from.
	LogEntries(ctx context.Context, from, count uint64) ([][]byte, error)
}

// TileHeight is the height of a tile: 2^8 = 256 hashes (c2sp.org/tlog-tiles).
const TileHeight = 8

const tileWidth = 1 << TileHeight

// MaxEntryBytes bounds one entry: an entry bundle writes each entry's
// length in two bytes.
const MaxEntryBytes = 1<<16 - 1

// Log is the issuer's log: appending (the signing paths) and the read side.
type Log struct {
	store  Store
	origin string
	key    func() ed25519.PrivateKey // the issuer's active signing key, at the time of each checkpoint
	nodes  nodeCache
}

// nodeCache keeps tree nodes the proofs read. A stored node is the hash of
// a complete subtree, written once in the append that completed it and
// never rewritten (one sequencer, rows only added), and proofs read only
// committed nodes, so a node once read is the node for good; every signing
// answer's proof reads about log2(size) of them, most of them the same
// recent ones, and on SQLite each read waits for the one connection.
type nodeCache struct {
	mu sync.Mutex
	m  map[[2]uint64]Hash
}

// nodeCacheMax bounds the cache (about 6 MB); a full cache starts over.
const nodeCacheMax = 1 << 16

// cached is the store's hashes through the cache.
func (l *Log) cached() HashReader { return cachedReader{l.store, &l.nodes} }

// put keeps h as node (level, index).
func (c *nodeCache) put(level int, index uint64, h Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= nodeCacheMax {
		c.m = make(map[[2]uint64]Hash)
	}
	c.m[[2]uint64{uint64(level), index}] = h
}

// Appended keeps the nodes that the append of entries at index first,
// committed, wrote: each entry's proof is then read from memory, where the
// newest nodes were read from the store by every answer of a batch, one
// query after another on SQLite's one connection. They are computed as the
// append computed them (NewNodes over the same leaves, the left siblings
// through the cache), so the cache holds what the store does; a left
// sibling that cannot be read leaves the cache as it was.
func (l *Log) Appended(ctx context.Context, first uint64, entries [][]byte) {
	leaves := make([]Hash, len(entries))
	for i, e := range entries {
		leaves[i] = merkle.LeafHash(e)
	}
	nodes, err := NewNodes(ctx, l.cached(), first, leaves)
	if err != nil {
		return
	}
	for _, n := range nodes {
		l.nodes.put(n.Level, n.Index, n.Hash)
	}
}

type cachedReader struct {
	r HashReader
	c *nodeCache
}

func (cr cachedReader) Hash(ctx context.Context, level int, index uint64) (Hash, error) {
	key := [2]uint64{uint64(level), index}
	cr.c.mu.Lock()
	h, ok := cr.c.m[key]
	cr.c.mu.Unlock()
	if ok {
		return h, nil
	}
	h, err := cr.r.Hash(ctx, level, index)
	if err != nil {
		return h, err
	}
	cr.c.put(level, index, h)
	return h, nil
}

// New is the log of an issuer named issuer (the key directory's issuer) on
// a store, its checkpoints signed with the key key answers.
func New(st Store, issuer string, key func() ed25519.PrivateKey) *Log {
	return &Log{store: st, origin: Origin(issuer), key: key}
}

// Origin is the log's origin.
func (l *Log) Origin() string { return l.origin }

// Append adds one entry and answers its tlog-proof against the checkpoint
// that first covers it: a signing answer is given only once the log holds
// what it signed.
func (l *Log) Append(ctx context.Context, entry []byte) (string, error) {
	if len(entry) == 0 || len(entry) > MaxEntryBytes {
		return "", fmt.Errorf("tlog: an entry of %d bytes (1 to %d)", len(entry), MaxEntryBytes)
	}
	first, cp, err := l.store.LogAppend(ctx, [][]byte{entry}, l.sign)
	if err != nil {
		return "", fmt.Errorf("tlog: append: %w", err)
	}
	return l.proof(ctx, first, cp)
}

// Sign signs the checkpoint of a tree of size entries with root: what a
// store's append is handed, where the caller appends itself (the issuer's
// batched commits, store.Issue).
func (l *Log) Sign(size uint64, root Hash) (string, error) { return l.sign(size, root) }

// ProofFor is the tlog-proof of entry index against the checkpoint cp that
// the append which wrote it answered.
func (l *Log) ProofFor(ctx context.Context, index uint64, cp string) (string, error) {
	return l.proof(ctx, index, cp)
}

func (l *Log) sign(size uint64, root Hash) (string, error) {
	k := l.key()
	if k == nil {
		return "", errors.New("tlog: no signing key")
	}
	return SignNote(CheckpointText(l.origin, size, root), l.origin, k), nil
}

func (l *Log) proof(ctx context.Context, index uint64, cp string) (string, error) {
	size, ok := ParseCheckpointSize(cp)
	if !ok {
		return "", fmt.Errorf("tlog: the stored checkpoint does not read")
	}
	hs, err := InclusionProof(ctx, l.cached(), index, size)
	if err != nil {
		return "", err
	}
	return Proof(index, hs, cp), nil
}

// ProofAt is the tlog-proof of entry index against the newest checkpoint.
func (l *Log) ProofAt(ctx context.Context, index uint64) (string, error) {
	cp, err := l.store.LogCheckpoint(ctx)
	if err != nil {
		return "", err
	}
	return l.proof(ctx, index, cp)
}

// Consistency is the consistency proof from size m to size n (0: the
// newest checkpoint's size), with the newest checkpoint. A host asks for n
// below the newest when it holds a checkpoint of that size already: the one
// a lockfile's proof carried, against the one it kept.
func (l *Log) Consistency(ctx context.Context, m, n uint64) ([]Hash, string, error) {
	cp, err := l.store.LogCheckpoint(ctx)
	if err != nil {
		return nil, "", err
	}
	size, _ := ParseCheckpointSize(cp)
	if n == 0 {
		n = size
	}
	if m > n || n > size {
		return nil, "", fmt.Errorf("tlog: the log has %d entries: no consistency proof from %d to %d", size, m, n)
	}
	hs, err := ConsistencyProof(ctx, l.cached(), m, n)
	return hs, cp, err
}

// Immutable is the cache policy of a tile: its bytes never change.
const Immutable = "public, max-age=31536000, immutable"

// ServeHTTP serves the read side (c2sp.org/tlog-tiles): GET
// /log/checkpoint, /log/tile/<L>/<N>[.p/<W>] and
// /log/tile/entries/<N>[.p/<W>]. A tile is served only as far as the
// newest checkpoint reaches, so every tile a client reads is covered by a
// checkpoint it can verify.
func (l *Log) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	cp, err := l.store.LogCheckpoint(r.Context())
	if err != nil {
		http.Error(w, "the log is not available", http.StatusServiceUnavailable)
		return
	}
	size, _ := ParseCheckpointSize(cp)
	if r.URL.Path == "/log/checkpoint" {
		if cp == "" {
			http.Error(w, "the log is empty", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write([]byte(cp))
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/log/tile/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	level, entries := -1, false
	if e, ok := strings.CutPrefix(rest, "entries/"); ok {
		rest, entries = e, true
	} else if i := strings.IndexByte(rest, '/'); i > 0 {
		n, err := strconv.Atoi(rest[:i])
		if err != nil || rest[:i] != strconv.Itoa(n) || n < 0 || n > 7 {
			http.NotFound(w, r)
			return
		}
		level, rest = n, rest[i+1:]
	}
	n, width, ok := parseTileIndex(rest)
	if !ok || (!entries && level < 0) {
		http.NotFound(w, r)
		return
	}
	// How many nodes of the tile's level the checkpoint covers.
	shift := uint(TileHeight * max(level, 0))
	var have uint64
	if shift < 64 {
		have = size >> shift
	}
	// n is compared before it is multiplied: n*256 of an index past
	// 2^56 wraps, and tile 2^56 was served as tile 0, marked immutable
	// (issue 37, F15).
	if n > have/tileWidth {
		http.NotFound(w, r)
		return
	}
	start := n * tileWidth
	if start >= have || start+width > have {
		http.NotFound(w, r)
		return
	}
	var body []byte
	if entries {
		es, err := l.store.LogEntries(r.Context(), start, width)
		if err != nil {
			http.Error(w, "the log is not available", http.StatusServiceUnavailable)
			return
		}
		for _, e := range es {
			body = binary.BigEndian.AppendUint16(body, uint16(len(e)))
			body = append(body, e...)
		}
	} else {
		for i := range width {
			h, err := l.store.Hash(r.Context(), TileHeight*level, start+i)
			if err != nil {
				http.Error(w, "the log is not available", http.StatusServiceUnavailable)
				return
			}
			body = append(body, h[:]...)
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", Immutable)
	w.Write(body)
}

// parseTileIndex reads <N>[.p/<W>]: N in groups of three digits, each but
// the last prefixed x (1234067 is x001/x234/067); W from 1 to 255 for a
// partial tile, else the full 256.
func parseTileIndex(s string) (n, width uint64, ok bool) {
	width = tileWidth
	if i := strings.Index(s, ".p/"); i >= 0 {
		w, err := strconv.Atoi(s[i+3:])
		if err != nil || s[i+3:] != strconv.Itoa(w) || w < 1 || w >= tileWidth {
			return 0, 0, false
		}
		width, s = uint64(w), s[:i]
	}
	groups := strings.Split(s, "/")
	for i, g := range groups {
		if i < len(groups)-1 {
			var found bool
			if g, found = strings.CutPrefix(g, "x"); !found {
				return 0, 0, false
			}
		}
		if len(g) != 3 || g[0] < '0' || g[0] > '9' || g[1] < '0' || g[1] > '9' || g[2] < '0' || g[2] > '9' {
			return 0, 0, false
		}
		if n > (1<<63)/1000 {
			return 0, 0, false
		}
		n = n*1000 + uint64(g[0]-'0')*100 + uint64(g[1]-'0')*10 + uint64(g[2]-'0')
	}
	if len(groups) > 1 && groups[0] == "x000" {
		return 0, 0, false // one spelling per index: no leading zero group
	}
	return n, width, true
}

// TilePath is the path of tile (level, n), width hashes ("" level -1: the
// entry bundle).
func TilePath(level int, n, width uint64) string {
	p := "/log/tile/"
	if level < 0 {
		p += "entries/"
	} else {
		p += strconv.Itoa(level) + "/"
	}
	s := fmt.Sprintf("%03d", n%1000)
	for n /= 1000; n > 0; n /= 1000 {
		s = fmt.Sprintf("x%03d/", n%1000) + s
	}
	p += s
	if width < tileWidth {
		p += ".p/" + strconv.FormatUint(width, 10)
	}
	return p
}
