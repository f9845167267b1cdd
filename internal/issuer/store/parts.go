package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Documents in parts (Document.Shared). A receipt carries its inputs so
// that it can be replayed and audited on its own: for a lock check that is
// the whole tool list, 115 KB of the 116 KB receipt of a 100-tool check,
// and a host checks the same list again and again. Written whole, every
// check put the list into SQLite's WAL and again into the database (most of
// the store's cost under make load, docs/benchmarks.md). In parts, a shared
// span is written once, by the SHA-256 of its exact bytes (document_parts),
// and each document's row keeps the rest and where each part goes back.
//
// documents.parts lists "OFFSET:SHA256" for each part, comma-separated, in
// order; OFFSET is where the part starts in the whole document. Joining is
// checked: each part read must hash to the digest it is stored by, so a
// part changed is an error, never another document.

// part is a shared span's bytes and their digest.
type part struct {
	sha  string
	body []byte
}

// split cuts d.Body at its shared spans: what the document's row keeps
// (rest), its parts column and the parts themselves.
func (s *sqlStore) split(d Document) (rest []byte, refs string, parts []part, err error) {
	if len(d.Shared) == 0 {
		return d.Body, "", nil, nil
	}
	var b strings.Builder
	at, kept := 0, len(d.Body)
	for i, sp := range d.Shared {
		if sp.Start < at || sp.End <= sp.Start || sp.End > len(d.Body) {
			return nil, "", nil, fmt.Errorf("store: document %s: shared span %d [%d, %d) is not in order within its %d bytes", d.SHA256, i, sp.Start, sp.End, len(d.Body))
		}
		body := d.Body[sp.Start:sp.End]
		p := part{s.digests.of(body), body}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:%s", sp.Start, p.sha)
		parts = append(parts, p)
		at, kept = sp.End, kept-len(body)
	}
	rest = make([]byte, 0, kept)
	at = 0
	for _, sp := range d.Shared {
		rest = append(rest, d.Body[at:sp.Start]...)
		at = sp.End
	}
	return append(rest, d.Body[at:]...), b.String(), parts, nil
}

// documentRows are the rows of documents and of document_parts that docs
// write, each in the order of its key (documents by digest, each part once
// by its digest): two PostgreSQL transactions inserting the same new rows
// take their row locks in one order, so they never wait for each other in
// a cycle (sql.go's Issue).
func (s *sqlStore) documentRows(docs []Document) (rows, partRows [][]any, err error) {
	docs = slices.SortedFunc(slices.Values(docs), func(a, b Document) int { return strings.Compare(a.SHA256, b.SHA256) })
	byDigest := map[string][]byte{}
	for _, d := range docs {
		rest, refs, parts, err := s.split(d)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, []any{d.SHA256, d.Kind, d.KeyID, d.Subject, micros(d.IssuedAt), rest, refs, d.Principal})
		for _, p := range parts {
			byDigest[p.sha] = p.body
		}
	}
	for _, sha := range slices.Sorted(maps.Keys(byDigest)) {
		partRows = append(partRows, []any{sha, byDigest[sha]})
	}
	return rows, partRows, nil
}

const (
	insertDocument = `INSERT INTO documents (sha256, kind, key_id, subject, issued_at, body, parts, principal) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	insertPart     = `INSERT INTO document_parts (sha256, body) VALUES (?, ?) ON CONFLICT DO NOTHING`
)

// join puts a document stored in parts back together: rest with each part
// (get answers one by its digest, checked against it) where refs says.
func join(digest string, rest []byte, refs string, get func(sha string) ([]byte, error)) ([]byte, error) {
	var body []byte
	at := 0 // in rest
	for _, ref := range strings.Split(refs, ",") {
		off, sha, ok := strings.Cut(ref, ":")
		n, err := strconv.Atoi(off)
		if k := n - len(body); !ok || err != nil || k < 0 || k > len(rest)-at {
			return nil, fmt.Errorf("store: document %s: its parts column is malformed at %q", digest, ref)
		} else {
			body = append(body, rest[at:at+k]...)
			at += k
		}
		p, err := get(sha)
		if err != nil {
			return nil, fmt.Errorf("store: document %s: part %s: %w", digest, sha, err)
		}
		if sum := sha256.Sum256(p); hex.EncodeToString(sum[:]) != sha {
			return nil, fmt.Errorf("store: document %s: part %s does not hash to its digest", digest, sha)
		}
		body = append(body, p...)
	}
	return append(body, rest[at:]...), nil
}

// partDigests remembers the digests of the last few parts by their exact
// bytes: a host sends one tool list again and again, and hashing its 115 KB
// at every check cost about 0.06 ms where comparing costs a tenth of that.
// A hit is the digest hashing would give: the bytes are equal.
type partDigests struct {
	mu      sync.Mutex
	entries []part // most recently used first; each body a copy never changed
}

// partDigestsKept is how many parts are remembered; partDigestBytes caps
// one, so that at most 8 MB is kept alive.
const (
	partDigestsKept = 8
	partDigestBytes = 1 << 20
)

func (c *partDigests) of(body []byte) string {
	c.mu.Lock()
	for i, e := range c.entries {
		if bytes.Equal(e.body, body) {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			return e.sha
		}
	}
	c.mu.Unlock()
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	if len(body) <= partDigestBytes {
		c.mu.Lock()
		c.entries = append([]part{{sha, bytes.Clone(body)}}, c.entries[:min(len(c.entries), partDigestsKept-1)]...)
		c.mu.Unlock()
	}
	return sha
}
