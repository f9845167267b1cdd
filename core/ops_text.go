package core

import (
	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/req"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// opEscapeText shows a string to a person: the one rule (core/textsafe) that
// the CLI, the SDKs and the browser page all apply, so none of them can be
// made to print a terminal control or an invisible character.
func opEscapeText(r req.Obj) (canon.Value, error) {
	if err := r.Only("text"); err != nil {
		return canon.Value{}, err
	}
	if !r.Has("text") {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.text is required")
	}
	s, err := r.Str("text", false)
	if err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(canon.M("text", canon.Str(textsafe.Escape(s)))), nil
}
