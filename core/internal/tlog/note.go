package tlog

import (
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/merkle"

	"github.com/crawlcheck/verifier/core/digest"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

// A signed note (c2sp.org/signed-note) is a text of lines, each ending in a
// newline, then a blank line, then one or more signature lines
//
//	— <key name> <base64 of a 4-byte key hash and the signature>
//
// An Ed25519 key's hash is the first 4 bytes of SHA-256(name || "\n" ||
// 0x01 || public key), and its signature is over the text, final newline
// included. Lines from keys a verifier does not know (a witness's
// cosignature) are skipped.

// MaxNoteSignatures bounds the signature lines of one note.
const MaxNoteSignatures = 32

// Reasons a checkpoint or proof does not verify. Each is what a record
// names; docs/log.md explains them.
const (
	ReasonMalformedProof      = "malformed_proof"
	ReasonMalformedCheckpoint = "malformed_checkpoint"
	ReasonOtherOrigin         = "other_origin"
	ReasonNoOrigin            = "no_log_origin"
	ReasonKeyUnknown          = "key_unknown"
	ReasonBadSignature        = "bad_signature"
)

// Failure is why a proof or checkpoint was refused: a reason (one of the
// Reason constants, a sig reason for a key that may not vouch, or a proof
// error's text) and words for a person.
type Failure struct {
	Reason string
	Detail string
}

func fail(reason, detail string) *Failure { return &Failure{Reason: reason, Detail: detail} }

type noteSig struct {
	name    string
	keyHash uint32
	sig     []byte
}

// splitNote separates a signed note into its text and its signature lines.
func splitNote(note string) (text string, sigs []noteSig, f *Failure) {
	bad := func(d string) (string, []noteSig, *Failure) { return "", nil, fail(ReasonMalformedCheckpoint, d) }
	if !utf8.ValidString(note) {
		return bad("the note is not valid UTF-8")
	}
	for i := 0; i < len(note); i++ {
		if c := note[i]; c < 0x20 && c != '\n' || c == 0x7f {
			return bad("the note holds a control character")
		}
	}
	split := strings.LastIndex(note, "\n\n")
	if split < 0 {
		return bad("the note has no blank line before its signatures")
	}
	text, rest := note[:split+1], note[split+2:]
	if rest == "" {
		return bad("the note has no signature lines")
	}
	if !strings.HasSuffix(rest, "\n") {
		return bad("the note's signature lines must each end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
	if len(lines) > MaxNoteSignatures {
		return bad("the note has more than " + num(uint64(MaxNoteSignatures)) + " signature lines")
	}
	for _, l := range lines {
		body, ok := strings.CutPrefix(l, "— ")
		name, b64, ok2 := strings.Cut(body, " ")
		if !ok || !ok2 || name == "" || strings.ContainsAny(name, " +") {
			return bad("a signature line is not \"— <name> <signature>\"")
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || len(raw) < 5 || base64.StdEncoding.EncodeToString(raw) != b64 {
			return bad("a signature line's signature is not base64 of a key hash and a signature")
		}
		sigs = append(sigs, noteSig{name: name, keyHash: be32(raw), sig: raw[4:]})
	}
	return text, sigs, nil
}

// KeyHash is the hash a signature line names an Ed25519 key by.
func KeyHash(name string, pub ed25519.PublicKey) uint32 {
	b := make([]byte, 0, len(name)+2+len(pub))
	b = append(append(append(b, name...), '\n', 0x01), pub...)
	h := digest.Sum256(b)
	return be32(h[:])
}

// Checkpoint is a verified checkpoint (c2sp.org/tlog-checkpoint): the
// text of a signed note whose lines are the origin, the tree size in
// decimal, the root hash in base64, and optional extension lines.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   merkle.Hash
	KeyID  string // the directory key that signed it
	Note   string // the whole note, as it was read
}

// Origin is the log origin of the issuer a key directory belongs to: its
// issuer name followed by "/log" (docs/decisions.md). A checkpoint of any
// other log is not this issuer's, whichever key signed it.
func Origin(dir *sig.Directory) string {
	if dir == nil || dir.Issuer == "" {
		return ""
	}
	return dir.Issuer + "/log"
}

// ParseCheckpointText reads a checkpoint's text (the note without its
// signatures).
func ParseCheckpointText(text string) (origin string, size uint64, root merkle.Hash, f *Failure) {
	bad := func(d string) (string, uint64, merkle.Hash, *Failure) {
		return "", 0, merkle.Hash{}, fail(ReasonMalformedCheckpoint, d)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return bad("a checkpoint has an origin, a size and a root hash line")
	}
	for _, l := range lines {
		if l == "" {
			return bad("a checkpoint has an empty line")
		}
	}
	size, ok := decimal(lines[1])
	if !ok {
		return bad("the checkpoint's size is not a decimal number without leading zeros")
	}
	root, ok = hashOf(lines[2])
	if !ok {
		return bad("the checkpoint's root hash is not the base64 of 32 bytes")
	}
	return lines[0], size, root, nil
}

// VerifyCheckpoint reads a signed checkpoint and verifies it with the
// issuer's key directory: its origin must be the directory's (Origin), and
// one of its signature lines must be a valid signature by a directory key
// that may vouch at now (active, within its window). A retired key verifies
// nothing, as for lockfiles (docs/keys.md).
func VerifyCheckpoint(note string, dir *sig.Directory, now time.Time) (Checkpoint, *Failure) {
	text, sigs, f := splitNote(note)
	if f != nil {
		return Checkpoint{}, f
	}
	origin, size, root, f := ParseCheckpointText(text)
	if f != nil {
		return Checkpoint{}, f
	}
	want := Origin(dir)
	switch {
	case want == "":
		return Checkpoint{}, fail(ReasonNoOrigin, "the key directory names no issuer, so no log origin is expected")
	case origin != want:
		return Checkpoint{}, fail(ReasonOtherOrigin, "the checkpoint is of the log "+quote(origin)+", not "+quote(want))
	}
	var refused *Failure
	for _, s := range sigs {
		if s.name != origin || len(s.sig) != ed25519.SignatureSize {
			continue
		}
		for _, k := range dir.Keys {
			if KeyHash(origin, k.Public) != s.keyHash {
				continue
			}
			if !ed25519.Verify(k.Public, []byte(text), s.sig) {
				refused = fail(ReasonBadSignature, "the signature of key "+quote(k.ID)+" does not verify over the checkpoint")
				continue
			}
			if reason := k.Usable(now); reason != "" {
				refused = fail(reason, "the checkpoint is signed by key "+quote(k.ID)+", which may not vouch now ("+reason+")")
				continue
			}
			return Checkpoint{Origin: origin, Size: size, Root: root, KeyID: k.ID, Note: note}, nil
		}
	}
	if refused != nil {
		return Checkpoint{}, refused
	}
	return Checkpoint{}, fail(ReasonKeyUnknown, "no signature on the checkpoint is by a key of the directory")
}

// ProofHeader is the first line of a tlog-proof file.
const ProofHeader = "c2sp.org/tlog-proof@v1"

// Proof is a parsed tlog-proof (c2sp.org/tlog-proof): the index of an
// entry, its inclusion proof, and the signed checkpoint it is a proof
// against, not yet verified.
type Proof struct {
	Extra      []byte
	Index      uint64
	Hashes     []merkle.Hash
	Checkpoint string
}

// ParseProof reads a tlog-proof:
//
//	c2sp.org/tlog-proof@v1
//	extra <base64>            (optional)
//	index <decimal>
//	<base64 hash>             (zero or more)
//	                          (an empty line)
//	<the signed checkpoint>
func ParseProof(s string) (Proof, *Failure) {
	bad := func(d string) (Proof, *Failure) { return Proof{}, fail(ReasonMalformedProof, d) }
	head, note, ok := strings.Cut(s, "\n\n")
	if !ok {
		return bad("a proof has its lines, an empty line and its checkpoint")
	}
	lines := strings.Split(head, "\n")
	if lines[0] != ProofHeader {
		return bad("a proof starts with the line " + ProofHeader)
	}
	lines = lines[1:]
	var p Proof
	if len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
		b64 := lines[0][len("extra "):]
		raw, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || base64.StdEncoding.EncodeToString(raw) != b64 {
			return bad("the proof's extra line is not base64")
		}
		p.Extra, lines = raw, lines[1:]
	}
	idx, found := "", false
	if len(lines) > 0 {
		idx, found = strings.CutPrefix(lines[0], "index ")
	}
	if !found {
		return bad("a proof names its entry's index on the line \"index <N>\"")
	}
	if p.Index, ok = decimal(idx); !ok {
		return bad("the proof's index is not a decimal number without leading zeros")
	}
	lines = lines[1:]
	if len(lines) > merkle.MaxProofHashes {
		return bad("the proof has more than " + num(uint64(merkle.MaxProofHashes)) + " hashes")
	}
	for _, l := range lines {
		h, ok := hashOf(l)
		if !ok {
			return bad("a proof line is not the base64 of a 32-byte hash")
		}
		p.Hashes = append(p.Hashes, h)
	}
	p.Checkpoint = note
	return p, nil
}

// ParseHashes reads a consistency proof given as base64 hashes.
func ParseHashes(ss []string) ([]merkle.Hash, *Failure) {
	if len(ss) > merkle.MaxProofHashes {
		return nil, fail(ReasonMalformedProof, "the proof has more than "+num(uint64(merkle.MaxProofHashes))+" hashes")
	}
	out := make([]merkle.Hash, len(ss))
	for i, s := range ss {
		h, ok := hashOf(s)
		if !ok {
			return nil, fail(ReasonMalformedProof, "proof["+num(uint64(i))+"] is not the base64 of a 32-byte hash")
		}
		out[i] = h
	}
	return out, nil
}

// decimal reads an unsigned decimal without sign or leading zeros.
func decimal(s string) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || n > (1<<63-1-uint64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// hashOf reads the one base64 spelling of a 32-byte hash.
func hashOf(s string) (merkle.Hash, bool) {
	var h merkle.Hash
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(raw) != merkle.HashSize || base64.StdEncoding.EncodeToString(raw) != s {
		return h, false
	}
	copy(h[:], raw)
	return h, true
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// quote and num word values in details as the core's messages do (JSON
// quoting), without strconv's tables in the wasm build.
func quote(s string) string { return canon.Str(s).String() }

func num(n uint64) string { return canon.Int(int64(n)).String() }
