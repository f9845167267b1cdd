package session

import (
	"slices"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/digest"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// The handshakes an observation may have begun with (observed.handshake).
const (
	HandshakeInitialize = "initialize"
	HandshakeDiscover   = "server/discover"
)

// Why a walk of tools/list pages ended (the observed action's stop, and
// next_page's): the list ended, tool_list_truncated's reasons, or a page
// the check will refuse.
const (
	StopListEnd   = "list_end"
	StopPageCap   = tools.TruncatedPageCap
	StopRepeated  = tools.TruncatedRepeated
	StopMalformed = "response_malformed"
)

// Where a fault happened (observed.failure_at).
const (
	AtHandshake = "handshake"
	AtToolsList = "tools/list"
)

// Walk is an observation in progress: the handshake's facts and how far the
// tools/list walk has come. It holds no page: the host keeps the handshake
// answer and the pages it read in its own buffer, in order, and the walk's
// end says which of them the check carries. The state travels whole at
// every event, so pages in it would make a walk of n pages copy n times
// their bytes; what it keeps instead is a few numbers and one digest per
// cursor followed (at most MaxPages of them, 64 bytes each).
type Walk struct {
	// Handshake is the handshake answered with a result ("" none);
	// Result, that the host kept its result's bytes; Protocol the version
	// the session uses ("" unknown).
	Handshake string
	Result    bool
	Protocol  string
	// Cap is the most pages to read; Pages how many were read and Bytes
	// their bytes together.
	Cap, Pages, Bytes int64
	// Followed are the SHA-256 of each cursor followed, in order: a cursor
	// the server hands out again is repeated, whatever its length.
	Followed []string
}

// ReadHandshake is the version a session uses, from the host's fact and
// the answer: the version the host's MCP SDK settled on when it keeps one
// (negotiated), else the protocolVersion string of an initialize result
// the strict parser reads; "" when neither says. A server/discover result
// names no version of its own: only the SDK's can be known.
func ReadHandshake(method, result, negotiated string) string {
	if negotiated != "" || method != HandshakeInitialize || result == "" {
		return negotiated
	}
	v, err := canon.ParseString(result)
	if err != nil {
		return ""
	}
	pv, _ := v.Get("protocolVersion")
	s, _ := pv.Str()
	return s
}

// PageStep reads one page of the walk: the cursor to follow next, or why
// the walk stops. The rules are next_page's: a page the strict parser
// refuses (an empty or non-string cursor included) stops it as malformed,
// a page without nextCursor ends the list, a cursor followed before is
// repeated, and the page cap stops it; past the bound on the pages
// together (limits.pages_bytes) no check could carry them, so the walk
// ends as the fault pages_over_cap, the pages dropped (over).
func (w *Walk) PageStep(page string) (cursor, stop string, over bool) {
	if w.Bytes+int64(len(page)) > continuity.MaxPagesBytes {
		return "", "", true
	}
	w.Pages++
	w.Bytes += int64(len(page))
	next, more, known := tools.PageCursor(page)
	var err error
	if !known { // a page of a walk the core has not read before
		_, next, more, err = tools.ParsePage(page)
		if err == nil && !more && w.Pages == 1 {
			// A whole walk in one page: a sighting for the walk memo, as
			// next_page's read of one is, so that ui_templates keeps it and
			// the check and make_lock find it instead of parsing it again.
			tools.NoteOnePageWalk(page)
		}
	}
	if err != nil {
		return "", StopMalformed, false
	}
	if !more {
		return "", StopListEnd, false
	}
	sum := digest.Hex([]byte(next))
	switch {
	case slices.Contains(w.Followed, sum):
		return "", StopRepeated, false
	case w.Pages >= w.Cap:
		return "", StopPageCap, false
	}
	w.Followed = append(w.Followed, sum)
	return next, "", false
}

// Observed is the observation a walk ended with, as the check event's
// observed carries it, but for what only the host holds (its endpoint, the
// capabilities it declared, the stray lines, what it launched, the
// features it read after the list) and the documents in its buffer (the
// observed action says which). A fault at a page is at tools/list page
// Pages+1; atHandshake, at the handshake. A fault's facts are kept
// as the record words them: a fault with a detail of the host's
// (answer_too_large's limit) or of the capture says nothing of where;
// resource_metadata only with unauthorized and forbidden; timeout_ms only
// with timeout; failure_command always with command_not_found; the exit
// status and stderr of process_exited only at the handshake (whether the
// child has been reaped by a later fault is a race).
func (w *Walk) Observed(stop string, f *continuity.Fault, atHandshake bool) canon.Value {
	var ms []canon.Member
	if w.Protocol != "" {
		ms = append(ms, canon.M("protocol_version", canon.Str(w.Protocol)))
	}
	if w.Handshake != "" {
		ms = append(ms, canon.M("handshake", canon.Str(w.Handshake)))
	}
	if stop == StopPageCap {
		ms = append(ms, canon.M("page_cap_reached", canon.BoolOf(true)))
	}
	if f != nil {
		ms = append(ms, canon.M("failure", canon.Str(f.Failure)))
		if f.Detail != "" {
			ms = append(ms, canon.M("failure_detail", canon.Str(f.Detail)))
		}
		at := ""
		if f.Detail == "" && f.Failure != continuity.FaultListCached && f.Failure != continuity.FaultNotCaptured {
			at = AtToolsList
			if atHandshake {
				at = AtHandshake
			}
			ms = append(ms, canon.M("failure_at", canon.Str(at)))
			if at == AtToolsList {
				ms = append(ms, canon.M("failure_page", canon.Int(w.Pages+1)))
			}
		}
		switch f.Failure {
		case continuity.FaultUnauthorized, continuity.FaultForbidden:
			if f.ResourceMetadata != "" {
				ms = append(ms, canon.M("resource_metadata", canon.Str(f.ResourceMetadata)))
			}
		case continuity.FaultTimeout:
			if f.TimeoutMS > 0 {
				ms = append(ms, canon.M("timeout_ms", canon.Int(int64(f.TimeoutMS))))
			}
		case continuity.FaultCommandNotFound:
			ms = append(ms, canon.M("failure_command", canon.Str(f.Command)))
		case continuity.FaultProcessExited:
			if at == AtHandshake {
				if f.HasExit {
					ms = append(ms, canon.M("exit_status", canon.Int(int64(f.ExitStatus))))
				}
				if f.StderrTail != "" {
					ms = append(ms, canon.M("stderr_tail", canon.Str(f.StderrTail)))
				}
			}
		}
	}
	return Obj(ms...)
}

// value is the walk as the state's walk member.
func (w *Walk) value() canon.Value {
	return Obj(
		canon.M("handshake", canon.StrOrNull(w.Handshake, w.Handshake != "")),
		canon.M("handshake_result", canon.BoolOf(w.Result)),
		canon.M("protocol_version", canon.StrOrNull(w.Protocol, w.Protocol != "")),
		canon.M("page_cap", canon.Int(w.Cap)),
		canon.M("pages", canon.Int(w.Pages)),
		canon.M("bytes", canon.Int(w.Bytes)),
		canon.M("followed", canon.Strs(w.Followed)),
	)
}

// parseWalk reads the state's walk member (absent or null: no walk).
func parseWalk(v canon.Value) (*Walk, error) {
	if v.IsNull() {
		return nil, nil
	}
	bad := cerr.New(cerr.BadRequest, "state.walk is not a walk the core wrote")
	if v.Kind() != canon.Object {
		return nil, bad
	}
	w := &Walk{}
	var ok bool
	for _, s := range []struct {
		name string
		into *string
	}{{"handshake", &w.Handshake}, {"protocol_version", &w.Protocol}} {
		if m := member(v, s.name); !m.IsNull() {
			if *s.into, ok = m.Str(); !ok {
				return nil, bad
			}
		}
	}
	if w.Result, ok = member(v, "handshake_result").BoolValue(); !ok {
		return nil, bad
	}
	for _, n := range []struct {
		name string
		into *int64
	}{{"page_cap", &w.Cap}, {"pages", &w.Pages}, {"bytes", &w.Bytes}} {
		if *n.into, ok = Int(member(v, n.name)); !ok {
			return nil, bad
		}
	}
	for _, c := range member(v, "followed").Elems() {
		s, ok := c.Str()
		if !ok {
			return nil, bad
		}
		w.Followed = append(w.Followed, s)
	}
	return w, nil
}
