package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/guard"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// replayStateKind names the issuer replay-state file's format
// (the replay_state op): {"kind": replayStateKind, "v": 1, "seen_nonces": […]}.
const replayStateKind = "crawlcheck-issuer-nonces"

// opReplayState reads and writes the issuer replay-state file, so that its
// format is one rule: the host hands the file as read (file) or guard's
// seen_nonces, and the core answers both the nonces guard takes and the
// bytes to write. A file not of the format is refused; a host never repairs
// it, since the replays it recorded would go unseen.
func opReplayState(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	var seen []guard.Nonce
	switch hasFile, hasSeen := rd.Has("file"), rd.Has("seen_nonces"); {
	case hasFile == hasSeen:
		rd.Fail(cerr.New(cerr.BadRequest, "give %s (the state file as read) or %s (guard's answer), one of them", rd.Field("file"), rd.Field("seen_nonces")))
	case hasFile:
		seen = replayFile(rd)
	default:
		seen = seenNonces(rd)
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	nonces := make([]canon.Value, len(seen))
	for i, n := range seen {
		nonces[i] = canon.Obj(canon.M("nonce", canon.Str(n.Nonce)), canon.M("expires_at", canon.Str(timefmt.Format(n.ExpiresAt))))
	}
	list := canon.Arr(nonces...)
	file := canon.Obj(
		canon.M("kind", canon.Str(replayStateKind)),
		canon.M("seen_nonces", list),
		canon.M("v", canon.Int(1)),
	)
	return canon.Obj(
		canon.M("seen_nonces", list),
		canon.M("file", canon.Str(string(canon.Canonical(file))+"\n")),
	), nil
}

// replayFile reads request.file, which must be a replay-state file.
func replayFile(rd *req.Reader) []guard.Nonce {
	doc := rd.RequiredDoc("file")
	if rd.Failed() {
		return nil
	}
	f := req.Obj{V: doc, Path: rd.Field("file")}
	kind, _ := doc.Get("kind")
	v, _ := doc.Get("v")
	k, _ := kind.Str()
	n, _ := v.NumberText()
	if doc.Kind() != canon.Object || k != replayStateKind || n != "1" || f.Only("kind", "v", "seen_nonces") != nil {
		rd.Fail(cerr.New(cerr.BadRequest, "%s is not a %s file (kind, v 1, seen_nonces)", rd.Field("file"), replayStateKind))
		return nil
	}
	fr := f.Read()
	if !fr.Has("seen_nonces") {
		rd.Fail(cerr.New(cerr.BadRequest, "%s.seen_nonces is required", rd.Field("file")))
		return nil
	}
	seen := seenNonces(fr)
	rd.Fail(fr.Err())
	return seen
}
