// Package features reads and hashes what a server offers beside its tools
// and the model may be handed: prompts (prompts/list), resources
// (resources/list), resource templates (resources/templates/list), and the
// MCP Apps UI templates tools name (a ui:// resource read with
// resources/read). The lockfile's "features" extension pins one hash per
// member of each item (docs/hashing.md, "features"), so that a prompt's
// rewritten description is named like a tool's, and a swapped UI template
// is seen behind a URI that stayed the same.
//
// Lists are read like tool lists: the pages exactly as the server sent
// them, parsed strictly, nextCursor followed by the host through the core's
// next_page op, a truncated walk never a pass.
package features

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/sorting"
)

// Kind is one list of the MCP schema beside tools/list.
type Kind struct {
	Name   string   // the lockfile's and the record's name of it
	Method string   // the JSON-RPC method that lists it
	Member string   // the result's member holding the items
	Key    string   // the item member that names an item (unique in a list)
	Parts  []string // the members hashed one by one, and "unknown", in canonical (UTF-16) order
}

// The three lists. Parts are every member of the item in the MCP schema
// (2025-11-25) a client or model reads, and MemberUnknown: every member the
// schema does not name, as one bucket. A resource's size is not pinned: it
// describes the resource's contents, which are data and change, not what
// the server says the resource is (docs/decisions.md).
var (
	Prompts = Kind{Name: "prompts", Method: "prompts/list", Member: "prompts", Key: "name",
		Parts: []string{"_meta", "arguments", "description", "icons", "name", "title", MemberUnknown}}
	Resources = Kind{Name: "resources", Method: "resources/list", Member: "resources", Key: "uri",
		Parts: []string{"_meta", "annotations", "description", "icons", "mimeType", "name", "title", MemberUnknown, "uri"}}
	Templates = Kind{Name: "resource_templates", Method: "resources/templates/list", Member: "resourceTemplates", Key: "uriTemplate",
		Parts: []string{"_meta", "annotations", "description", "icons", "mimeType", "name", "title", MemberUnknown, "uriTemplate"}}
)

// Kinds are the three lists in the order a lockfile and a record name them.
var Kinds = []Kind{Prompts, Resources, Templates}

// KindOf finds a list by its name or its method.
func KindOf(s string) (Kind, bool) {
	for _, k := range Kinds {
		if s == k.Name || s == k.Method {
			return k, true
		}
	}
	return Kind{}, false
}

// MemberUnknown is the part of every member the schema does not name.
const MemberUnknown = "unknown"

// unpinned are members the schema names that no part pins (Resources'
// size): neither a part of their own nor unknown.
var unpinned = map[string]bool{"size": true}

// Item is one prompt, resource or resource template as the server sent it.
type Item struct {
	Key    string      // its name, uri or uriTemplate
	SHA256 string      // SHA-256 of its canonical JSON as received: what an exception names
	Parts  Hashes      // one hash per part of its Kind
	Raw    canon.Value // the object as received
}

// Hashes are an item's part hashes, keyed by part name: each the SHA-256
// of the canonical JSON of the member (null when absent).
type Hashes map[string]string

// Value is the hashes as an object in the Kind's (canonical) order.
func (h Hashes) Value(k Kind) canon.Value {
	ms := make([]canon.Member, len(k.Parts))
	for i, p := range k.Parts {
		ms[i] = canon.M(p, canon.Str(h[p]))
	}
	return canon.Obj(ms...)
}

// PartValue is the value one part of an item hashes: the member as
// received (null when absent), or for unknown the object of every member
// the schema does not name (null when there is none).
func PartValue(k Kind, raw canon.Value, part string) canon.Value {
	if part != MemberUnknown {
		v, _ := raw.Get(part)
		return v
	}
	named := map[string]bool{}
	for _, p := range k.Parts {
		named[p] = true
	}
	var ms []canon.Member
	for _, m := range raw.Members() {
		if !named[m.Key] && !unpinned[m.Key] {
			ms = append(ms, m)
		}
	}
	if ms == nil {
		return canon.NullValue()
	}
	return canon.Obj(ms...)
}

// List is a whole list as read through its pages.
type List struct {
	Kind      Kind
	Items     []Item // in the server's order
	Pages     int
	Truncated string // "", or why the walk is incomplete (the tools' reasons)
}

// Truncation reasons, as for tool lists (tools.Truncated*).
const (
	TruncatedUnfollowed = "next_cursor_unfollowed"
	TruncatedRepeated   = "cursor_repeated"
	TruncatedPageCap    = "page_cap_reached"
)

// ParsePage reads one page of a list of kind k: its result object, or a
// JSON-RPC response carrying one. Unlike a tool page a bare array is not
// taken: no reader of these lists writes one. An empty-string nextCursor is
// refused, as for tools.
func ParsePage(k Kind, raw string) (list canon.Value, cursor string, hasCursor bool, err error) {
	v, err := canon.ParseAnswerString(raw)
	if err != nil {
		return list, "", false, asMalformed(err)
	}
	if v.Kind() != canon.Object {
		return list, "", false, malformed("a page is %s, not a %s result", v.Kind(), k.Method)
	}
	if v.Has("jsonrpc") {
		if e, ok := v.Get("error"); ok {
			return list, "", false, malformed("the server answered %s with a JSON-RPC error: %s", k.Method, clip(string(canon.Canonical(e))))
		}
		res, ok := v.Get("result")
		if !ok || res.Kind() != canon.Object {
			return list, "", false, malformed("a JSON-RPC response without a result object")
		}
		v = res
	}
	list, ok := v.Get(k.Member)
	if !ok {
		return list, "", false, malformed("a %s result without %q", k.Method, k.Member)
	}
	if list.Kind() != canon.Array {
		return list, "", false, malformed("%q is %s, not an array", k.Member, list.Kind())
	}
	c, ok := v.Get("nextCursor")
	if !ok || c.IsNull() {
		return list, "", false, nil
	}
	if cursor, ok = c.Str(); !ok {
		return list, "", false, malformed("nextCursor is %s, not a string", c.Kind())
	}
	if cursor == "" {
		return list, "", false, malformed("nextCursor is an empty string")
	}
	return list, cursor, true, nil
}

// MaxPages caps the pages of one list a check reads, as for tools.
const MaxPages = 1000

// FromPages parses and hashes the pages of one walk of a list of kind k, in
// the order they were read; pageCapReached is the host's fact that it
// stopped at its cap. A page it cannot parse, an item that is not an
// object, has no key string or repeats another's key, is a
// cerr.ToolsMalformed naming the page or item. No page is an error too: a
// server that offers none still answers with one page.
func FromPages(k Kind, pages []string, pageCapReached bool) (List, error) {
	l := List{Kind: k, Pages: len(pages)}
	if len(pages) == 0 {
		return l, malformed("no %s page was read", k.Method)
	}
	if len(pages) > MaxPages {
		pages, pageCapReached = pages[:MaxPages], true
		l.Pages = MaxPages
	}
	var all []canon.Value
	seen := map[string]bool{}
	lastHasCursor := false
	for i, raw := range pages {
		list, cursor, has, err := ParsePage(k, raw)
		if err != nil {
			return l, cerr.In("page "+canon.Int(int64(i+1)).String(), err)
		}
		if has && seen[cursor] {
			l.Truncated = TruncatedRepeated
			break
		}
		all = append(all, list.Elems()...)
		lastHasCursor = has
		if !has {
			if i != len(pages)-1 {
				return l, malformed("page %d has no nextCursor, yet %d more pages follow", i+1, len(pages)-1-i)
			}
			break
		}
		seen[cursor] = true
	}
	keys := map[string]int{}
	for i, v := range all {
		it, err := hashItem(k, i, v)
		if err != nil {
			return l, err
		}
		if j, dup := keys[it.Key]; dup {
			return l, malformed("%s[%d] and %s[%d] both have %s %q", k.Member, j, k.Member, i, k.Key, it.Key)
		}
		keys[it.Key] = i
		l.Items = append(l.Items, it)
	}
	switch {
	case l.Truncated != "":
	case pageCapReached:
		l.Truncated = TruncatedPageCap
	case lastHasCursor:
		l.Truncated = TruncatedUnfollowed
	}
	return l, nil
}

func hashItem(k Kind, i int, v canon.Value) (Item, error) {
	if v.Kind() != canon.Object {
		return Item{}, malformed("%s[%d] is %s, not an object", k.Member, i, v.Kind())
	}
	kv, ok := v.Get(k.Key)
	key, isStr := kv.Str()
	if !ok || !isStr || key == "" {
		return Item{}, malformed("%s[%d] has no %s string", k.Member, i, k.Key)
	}
	it := Item{Key: key, SHA256: canon.SHA256Hex(v), Raw: v, Parts: make(Hashes, len(k.Parts))}
	for _, p := range k.Parts {
		it.Parts[p] = canon.SHA256Hex(PartValue(k, v, p))
	}
	return it, nil
}

// Keys are the keys of items, sorted by UTF-16 code units.
func Keys[T any](m map[string]T) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sorting.Func(ks, canon.CompareKeys)
	return ks
}

func malformed(format string, args ...any) error {
	return cerr.New(cerr.ToolsMalformed, format, args...)
}

// asMalformed files a JSON refusal of a server's page under ToolsMalformed.
func asMalformed(err error) error {
	if c := cerr.CodeOf(err); c != cerr.ToolsMalformed && c != cerr.InputTooLarge {
		return cerr.New(cerr.ToolsMalformed, "%s (%s)", cerr.Message(err), c)
	}
	return err
}

// clip shortens s to at most 200 bytes, whole characters only.
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	i := 200
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
