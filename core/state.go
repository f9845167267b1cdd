package core

import "github.com/crawlcheck/verifier/core/memo"

// The core's state between calls is its memos (core/memo): the parsed
// lockfiles (lockcache.go), the walks of tools/list pages
// (core/internal/tools), and the parser's long strings and containers
// (core/internal/canon), all under one byte budget per instance, whose
// default (memo.DefaultLimit) suits a browser tab. docs/abi.md, "State".

// SetMemoLimit sets the bytes the instance's memos may hold together: a
// native host that checks many lists (the issuer: memo.IssuerLimit) sets
// more for itself; 0 turns the memos off (every call reads its input
// whole, and nothing is kept). Answers never depend on it.
func SetMemoLimit(bytes int64) { memo.Instance.SetLimit(bytes) }

// MemoStats are the instance's memos' counts: entries, bytes, hits,
// misses, admissions, refusals and evictions.
func MemoStats() []memo.Stats { return memo.Instance.Stats() }
