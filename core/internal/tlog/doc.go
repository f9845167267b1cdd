// Package tlog verifies what a transparency log hands out: C2SP signed notes
// and checkpoints, and C2SP tlog-proof files, whose RFC 6962 Merkle
// inclusion and consistency proofs it checks with core/merkle (the tree the
// issuer builds its log with).
//
// A log is a Merkle tree over its entries. A leaf is SHA-256(0x00 || entry),
// an interior node SHA-256(0x01 || left || right); the tree of n entries
// splits at the largest power of two below n. A checkpoint is a signed note
// naming the log (its origin), its size and its root hash; an inclusion proof
// shows one entry under that root; a consistency proof shows that a tree of
// size m is a prefix of the tree of size n, so that a log which showed one
// client one history and another client another is caught by whoever keeps a
// checkpoint.
//
// The package only verifies: the core draws no randomness and reads no
// clock. The issuer's log (internal/issuer/tlog) builds its trees and
// proofs with the same core/merkle.
package tlog
