package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/diff"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/scan"
)

// opInstructionsDiff answers what one reading of a server's handshake
// says of its instructions beside the ones read before (the issuer's
// registry sweep, docs/issuer.md): the instructions as the core reads them
// (ReadHandshake, as a check does), their digest (a record's
// server.instructions_sha256), and, when they differ from `old`, the word
// diff and the approval scan of the new text. A server that gives no
// instructions gives null, a state of its own: instructions appearing or
// going away is a change, as in a check (docs/decisions.md). A handshake
// the core cannot read is answered (malformed), never refused: it says
// nothing about the instructions, so nothing is compared.
func opInstructionsDiff(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	raw := rd.Page("handshake_result", true)
	old, hasOld := rd.Doc("old")
	if hasOld && old.Kind() != canon.String && !old.IsNull() {
		rd.Fail(cerr.New(cerr.BadRequest, "request.old must be an instructions_json this op answered: a JSON string, or null for none"))
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	null := canon.NullValue()
	_, ins, herr := continuity.ReadHandshake(raw)
	if herr != nil {
		return canon.Obj(
			canon.M("instructions_json", null), canon.M("sha256", null),
			canon.M("malformed", canon.Str(cerr.Message(herr))),
			canon.M("changed", canon.BoolOf(false)), canon.M("diff", null), canon.M("scan", null),
		), nil
	}
	changed := hasOld && !canon.Equal(old, ins)
	segs, found := null, null
	if changed {
		was, _ := old.Str()
		now, _ := ins.Str()
		segs = diff.SegmentsValue(diff.Words(was, now))
		if ins.Kind() == canon.String {
			found = scan.RunServer(nil, map[string]bool{}, scan.Server{Instructions: now, HasInstructions: true}).Value()
		}
	}
	return canon.Obj(
		canon.M("instructions_json", canon.Str(string(canon.Canonical(ins)))),
		canon.M("sha256", canon.Str(canon.SHA256Hex(ins))),
		canon.M("malformed", null),
		canon.M("changed", canon.BoolOf(changed)),
		canon.M("diff", segs),
		canon.M("scan", found),
	), nil
}
