package tools

import (
	"slices"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/memo"
)

// Why a tool list is incomplete. A truncated list is never a pass: the
// policy turns it into tool_list_truncated.
const (
	TruncatedUnfollowed = "next_cursor_unfollowed" // the last page read still had a nextCursor
	TruncatedRepeated   = "cursor_repeated"        // a server handed out a cursor it had handed out before
	TruncatedPageCap    = "page_cap_reached"       // the binding stopped at its page cap
)

// MaxPages caps the pages one check accepts (docs/abi.md).
const MaxPages = 1000

// Observed is a whole tools/list as read through its pages.
type Observed struct {
	Tools     []Tool
	Pages     int    // the pages the binding read and handed over
	Truncated string // "" or one of the Truncated* reasons

	// listSHA256 is ListSHA256(Tools), computed once for a walk the memo
	// keeps (a warm session's list is digested once, not every check);
	// "" otherwise. Tools is never changed after reading.
	listSHA256 string
}

// ListSHA256 is ListSHA256 of the tools read: the walk memo's, for a
// kept walk.
func (o Observed) ListSHA256() string {
	if o.listSHA256 != "" {
		return o.listSHA256
	}
	return ListSHA256(o.Tools)
}

// ParsePage reads one page as a server sent it: a tools/list result
// {"tools":[…],"nextCursor":…}, a JSON-RPC response carrying one, or a bare
// array of tools. An empty-string nextCursor is refused: MCP gives no
// meaning to it, and clients disagree on whether it ends the list.
func ParsePage(raw string) (list canon.Value, cursor string, hasCursor bool, err error) {
	v, err := canon.ParseAnswerString(raw)
	if err != nil {
		return list, "", false, err
	}
	return PageValue(v)
}

// PageValue is ParsePage over an already parsed document.
func PageValue(v canon.Value) (list canon.Value, cursor string, hasCursor bool, err error) {
	if v.Kind() == canon.Array {
		return v, "", false, nil
	}
	if v.Kind() != canon.Object {
		return list, "", false, cerr.New(cerr.ToolsMalformed, "a page is %s, not a tools/list result", v.Kind())
	}
	if v.Has("jsonrpc") {
		if e, ok := v.Get("error"); ok {
			return list, "", false, cerr.New(cerr.ToolsMalformed, "the server answered tools/list with a JSON-RPC error: %s", clip(string(canon.Canonical(e))))
		}
		res, ok := v.Get("result")
		if !ok || res.Kind() != canon.Object {
			return list, "", false, cerr.New(cerr.ToolsMalformed, "a JSON-RPC response without a result object")
		}
		v = res
	}
	list, ok := v.Get("tools")
	if !ok {
		return list, "", false, cerr.New(cerr.ToolsMalformed, "a tools/list result without \"tools\"")
	}
	if list.Kind() != canon.Array {
		return list, "", false, cerr.New(cerr.ToolsMalformed, "\"tools\" is %s, not an array", list.Kind())
	}
	c, ok := v.Get("nextCursor")
	if !ok || c.IsNull() {
		return list, "", false, nil
	}
	if cursor, ok = c.Str(); !ok {
		return list, "", false, cerr.New(cerr.ToolsMalformed, "nextCursor is %s, not a string", c.Kind())
	}
	if cursor == "" {
		return list, "", false, cerr.New(cerr.ToolsMalformed, "nextCursor is an empty string")
	}
	return list, cursor, true, nil
}

// FromPages parses and hashes the pages of one tools/list walk, in the order
// they were read. pageCapReached is the binding's fact that it stopped at its
// cap; everything else (an unfollowed or repeated cursor) the core sees in the
// pages themselves. A page it cannot parse is a cerr.ToolsMalformed naming the
// page. So is a walk of no pages: a server that offers no tools still answers
// with one page, so no page means nothing was read, never "no tools".
//
// A walk read before is answered from the walk memo (memo.go).
func FromPages(pages []string, pageCapReached bool) (Observed, error) {
	if obs, ok := knownWalk(pages, pageCapReached); ok {
		return obs, nil
	}
	f := canon.Fingerprint(pages...)
	seen := walks.Note(f)
	// A walk the memo would not keep is read without a copy (its pages'
	// bytes are the least it would cost).
	if n := pagesBytes(pages); n > walkMax || !walks.Admits(int64(n), seen) {
		return readPages(pages, pageCapReached, nil)
	}
	owned := memo.OwnAll(pages)
	texts := make([]string, len(owned))
	for i, p := range owned {
		texts[i] = p.String()
	}
	ends := make([]pageEnd, len(pages))
	obs, err := readPages(texts, pageCapReached, ends)
	if err != nil {
		return obs, err
	}
	obs.listSHA256 = ListSHA256(obs.Tools)
	w := &walk{pages: owned, capped: pageCapReached, obs: obs, ends: ends}
	if _, kept := walks.Keep(w, walkCost(w), f, seen); kept {
		obs.Tools = slices.Clone(obs.Tools)
	}
	return obs, nil
}

// readPages is FromPages without the memo. It notes in ends (nil, or one
// per page) the cursor of each page it parsed.
func readPages(pages []string, pageCapReached bool, ends []pageEnd) (Observed, error) {
	obs := Observed{Pages: len(pages)}
	if len(pages) == 0 {
		return obs, cerr.New(cerr.ToolsMalformed, "no tools/list page was read")
	}
	if len(pages) > MaxPages {
		// Beyond the cap a walk is not compared: the list is truncated,
		// as if the host had stopped at the cap (docs/abi.md, Limits).
		pages, pageCapReached = pages[:MaxPages], true
		obs.Pages = MaxPages
	}
	var all []canon.Value
	seen := map[string]bool{}
	lastHasCursor := false
	for i, raw := range pages {
		list, cursor, has, err := ParsePage(raw)
		if err != nil {
			return obs, cerr.In(pageName(i), asMalformed(err))
		}
		if ends != nil {
			ends[i] = pageEnd{cursor: cursor, more: has, read: true}
		}
		if has && seen[cursor] {
			// The walk ends here; this page's tools are not taken, since a
			// server that repeats a cursor may be repeating the page too.
			obs.Truncated = TruncatedRepeated
			break
		}
		all = append(all, list.Elems()...)
		lastHasCursor = has
		if !has {
			if i != len(pages)-1 {
				return obs, cerr.New(cerr.ToolsMalformed, "page %d has no nextCursor, yet %d more pages follow", i+1, len(pages)-1-i)
			}
			break
		}
		seen[cursor] = true
	}
	ts, err := Hash(canon.Arr(all...))
	if err != nil {
		return obs, err
	}
	obs.Tools = ts
	switch {
	case obs.Truncated != "":
	case pageCapReached:
		obs.Truncated = TruncatedPageCap
	case lastHasCursor:
		obs.Truncated = TruncatedUnfollowed
	}
	return obs, nil
}

// asMalformed files every JSON refusal of a server's page under
// ToolsMalformed, keeping the JSON code's words in the message.
func asMalformed(err error) error {
	if c := cerr.CodeOf(err); c != cerr.ToolsMalformed && c != cerr.InputTooLarge {
		return cerr.New(cerr.ToolsMalformed, "%s (%s)", cerr.Message(err), c)
	}
	return err
}

// pageName names a page for a message, counting from 1 as a person does.
func pageName(i int) string { return "page " + canon.Int(int64(i+1)).String() }

// clip shortens s to at most 200 bytes, never cutting a character in half:
// the message ends up in records, which must stay UTF-8.
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	i := 200
	for !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
