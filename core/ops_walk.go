package core

import (
	"slices"
	"strconv"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// DefaultPageCap is the most tools/list pages a walk reads when the host
// names no cap (next_page's page_cap).
const DefaultPageCap = 100

// Why a walk of tools/list pages stops (next_page's stop). Each is the name
// the record gives the same fact: the list ended, tool_list_truncated's
// reasons, or response_malformed for a page the check will refuse.
const (
	stopListEnd   = "list_end"
	stopPageCap   = tools.TruncatedPageCap
	stopRepeated  = tools.TruncatedRepeated
	stopMalformed = "response_malformed"
)

// opNextPage decides one step of a tools/list walk, so that no host keeps
// its own rule for when to stop following nextCursor: the host hands the
// page it has just read and the cursors followed before it, and sends the
// cursor answered, or stops. A page the strict parser refuses stops the
// walk (the check records it as response_malformed); so does an empty or
// non-string cursor, which that parser refuses too.
func opNextPage(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	page := rd.Page("page", true)
	followed := rd.Strings("followed")
	kind, other := walkList(rd)
	pageCap := DefaultPageCap
	if rd.Has("page_cap") && !rd.Failed() {
		pageCap = positiveInt(rd, "page_cap")
	}
	if !rd.Failed() && len(followed) >= MaxPages {
		rd.Fail(cerr.New(cerr.BadRequest, "%s holds %d cursors: a walk reads at most %d pages", rd.Field("followed"), len(followed), MaxPages))
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	pageCap = min(pageCap, MaxPages) // beyond it no check compares a walk
	stop, cursor := stopListEnd, ""
	var next string
	var more, known bool
	var err error
	if other {
		// A prompts, resources or templates page (ops_features.go).
		_, next, more, err = features.ParsePage(kind, page)
	} else if next, more, known = tools.PageCursor(page); !known { // a page of a walk the core read before
		_, next, more, err = tools.ParsePage(page)
		if err == nil && !more && len(followed) == 0 {
			tools.NoteOnePageWalk(page)
		}
	}
	switch {
	case err != nil:
		stop = stopMalformed
	case !more:
	case slices.Contains(followed, next):
		stop = stopRepeated
	case len(followed)+1 >= pageCap:
		stop = stopPageCap
	default:
		stop, cursor = "", next
		followed = append(followed, next)
	}
	answer := []canon.Member{
		canon.M("cursor", canon.NullValue()),
		canon.M("stop", canon.Str(stop)),
		canon.M("followed", canon.Strs(followed)),
		canon.M("page_cap_reached", canon.BoolOf(stop == stopPageCap)),
	}
	if stop == "" {
		answer[0] = canon.M("cursor", canon.Str(cursor))
		answer[1] = canon.M("stop", canon.NullValue())
	}
	return canon.Obj(answer...), nil
}

// positiveInt reads a field that must be a whole number from 1 up.
func positiveInt(rd *req.Reader, name string) int { return wholeInt(rd, name, 1) }

// wholeInt reads a field that must be a whole number from least up.
func wholeInt(rd *req.Reader, name string, least int) int {
	text, ok := rd.Value(name).NumberText()
	n, err := strconv.Atoi(text)
	if !ok || err != nil || n < least {
		rd.Fail(cerr.New(cerr.BadRequest, "%s must be a whole number of at least %d", rd.Field(name), least))
		return 0
	}
	return n
}
