package core

import (
	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/req"
	"github.com/crawlcheck/verifier/core/scan"
)

// opScan answers the scan_at_approval object for a tool list: what
// make_lock writes, for a host to show before a person approves. names,
// when given, keeps the findings of those tools (the whole list still
// counts for references between tools).
func opScan(r req.Obj) (canon.Value, error) {
	if err := r.Only("tools", "pages", "page_cap_reached", "names"); err != nil {
		return canon.Value{}, err
	}
	obs, err := toolSource(r)
	if err != nil {
		return canon.Value{}, err
	}
	if obs.Truncated != "" {
		return canon.Value{}, cerr.New(cerr.BadRequest, "the tool list is truncated (%s): a scan of part of a list would call the rest clean", obs.Truncated)
	}
	var only map[string]bool
	if r.Has("names") {
		names, err := r.Strings("names")
		if err != nil {
			return canon.Value{}, err
		}
		listed := make(map[string]bool, len(obs.Tools))
		for _, t := range obs.Tools {
			listed[t.Name] = true
		}
		only = make(map[string]bool, len(names))
		for i, n := range names {
			if !listed[n] {
				return canon.Value{}, cerr.New(cerr.BadRequest, "request.names[%d] (%s) is not a tool of the list", i, canon.Str(n))
			}
			only[n] = true
		}
	}
	return scan.Run(obs.Tools, only).Value(), nil
}
