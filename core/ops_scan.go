package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/scan"
)

// opScan answers the scan_at_approval object for a tool list: what
// make_lock writes, for a host to show before a person approves. names,
// when given, keeps the findings of those tools (the whole list still
// counts for references between tools).
func opScan(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	obs := toolSource(rd)
	hasNames := rd.Has("names")
	names := rd.Strings("names")
	var srv scan.Server
	if rd.Has("instructions") {
		srv = scan.Server{Instructions: rd.Str("instructions", false), HasInstructions: true}
	}
	// The handshake's result as the server sent it: the core reads its
	// instructions, so a host shows the scan of what it is about to approve
	// without reading the handshake itself.
	if raw, ok, err := r.Raw("handshake_result"); err != nil {
		rd.Fail(err)
	} else if ok && !rd.Failed() {
		if srv.HasInstructions {
			rd.Fail(cerr.New(cerr.BadRequest, "give either %s or %s, not both", rd.Field("instructions"), rd.Field("handshake_result")))
		}
		_, instructions, herr := continuity.ReadHandshake(raw)
		if herr != nil {
			rd.Fail(cerr.New(cerr.BadRequest, "%s could not be read (%s)", rd.Field("handshake_result"), herr))
		}
		text, _ := instructions.Str()
		srv = scan.Server{Instructions: text, HasInstructions: true}
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if obs.Truncated != "" {
		return canon.Value{}, cerr.New(cerr.BadRequest, "the tool list is truncated (%s): a scan of part of a list would call the rest clean", obs.Truncated)
	}
	var only map[string]bool
	if hasNames {
		listed := make(map[string]bool, len(obs.Tools))
		for _, t := range obs.Tools {
			listed[t.Name] = true
		}
		only = make(map[string]bool, len(names))
		for i, n := range names {
			if !listed[n] {
				return canon.Value{}, cerr.New(cerr.BadRequest, "%s[%d] (%s) is not a tool of the list", rd.Field("names"), i, canon.Str(n))
			}
			only[n] = true
		}
	}
	return scan.RunServer(obs.Tools, only, srv).Value(), nil
}
