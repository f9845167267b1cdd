package tlog

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
)

// Origin is the log's origin for an issuer name: what the core expects of
// a checkpoint verified with that issuer's key directory (docs/log.md).
func Origin(issuer string) string { return issuer + "/log" }

// CheckpointText is the text of a checkpoint (c2sp.org/tlog-checkpoint).
func CheckpointText(origin string, size uint64, root Hash) string {
	return origin + "\n" + strconv.FormatUint(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"
}

// SignNote signs a note's text with an Ed25519 key under name
// (c2sp.org/signed-note): the text, a blank line, one signature line.
func SignNote(text, name string, key ed25519.PrivateKey) string {
	pub := key.Public().(ed25519.PublicKey)
	h := sha256.Sum256(append(append([]byte(name), '\n', 1), pub...))
	sig := append(h[:4:4], ed25519.Sign(key, []byte(text))...)
	return text + "\n— " + name + " " + base64.StdEncoding.EncodeToString(sig) + "\n"
}

// Proof is the tlog-proof of entry index against a signed checkpoint
// (c2sp.org/tlog-proof).
func Proof(index uint64, hashes []Hash, checkpoint string) string {
	var b strings.Builder
	b.WriteString("c2sp.org/tlog-proof@v1\nindex " + strconv.FormatUint(index, 10) + "\n")
	for _, h := range hashes {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n" + checkpoint)
	return b.String()
}

// ParseCheckpointSize reads the size line of a checkpoint note (the note
// is the log's own, read back from its store).
func ParseCheckpointSize(note string) (uint64, bool) {
	lines := strings.SplitN(note, "\n", 3)
	if len(lines) < 3 {
		return 0, false
	}
	n, err := strconv.ParseUint(lines[1], 10, 64)
	return n, err == nil
}
