package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/req"
)

// opResourceMetadata reads the resource_metadata URL out of a 401's or a
// 403's WWW-Authenticate lines (continuity.ResourceMetadataOf): the host
// hands over the header lines as the server sent them and keeps the URL for
// its fault unauthorized or forbidden; how the server's header is parsed is
// one rule, here, not one parser per host.
func opResourceMetadata(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	if !rd.Has("www_authenticate") {
		rd.Fail(cerr.New(cerr.BadRequest, "%s is required (the WWW-Authenticate lines, [] when there are none)", rd.Field("www_authenticate")))
	}
	lines := rd.Strings("www_authenticate")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(canon.M("resource_metadata", canon.Str(continuity.ResourceMetadataOf(lines)))), nil
}
