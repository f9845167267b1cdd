package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// opEscapeText shows a string to a person: the one rule (core/textsafe) that
// the CLI, the SDKs and the browser page all apply, so none of them can be
// made to print a terminal control or an invisible character.
func opEscapeText(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	if !rd.Has("text") {
		rd.Fail(cerr.New(cerr.BadRequest, "%s is required", rd.Field("text")))
	}
	s := rd.Str("text", false)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(canon.M("text", canon.Str(textsafe.Escape(s)))), nil
}
