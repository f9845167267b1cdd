package features

import (
	"strings"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/sorting"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// The parts of a UI template (MCP Apps): what the host renders, and what
// the server asks of the host for it.
const (
	// UIContents is the resources/read result's contents, each item without
	// its _meta: the uri, mimeType and text or blob the host renders.
	UIContents = "contents"
	// UIMeta is each content item's _meta (null when absent), in order:
	// MCP Apps puts the template's csp, permissions, domain and border
	// preference in its _meta.ui.
	UIMeta = "_meta"
)

// UIParts are a UI template's parts in canonical order.
var UIParts = []string{UIMeta, UIContents}

// MaxUITemplates bounds the ui:// resources one lockfile pins and one
// check reads: a server naming more in its tools makes a lock refuse, and a
// check read no more (the rest are not compared, and say so).
const MaxUITemplates = 64

// UIScheme is the scheme of an MCP Apps UI resource.
const UIScheme = "ui://"

// UIResourceURI is the ui:// resource a tool names in _meta.ui.resourceUri,
// "" when it names none (or names something that is not a ui:// URI, which
// no MCP Apps host renders).
func UIResourceURI(t *tools.Tool) string {
	ui := t.MemberValue(tools.MemberMetaUI)
	v, _ := ui.Get("resourceUri")
	s, _ := v.Str()
	if !strings.HasPrefix(s, UIScheme) {
		return ""
	}
	return s
}

// UIResourceURIs are the distinct ui:// resources the tools name, sorted:
// what a host reads with resources/read at lock and check time. More than
// MaxUITemplates are cut to the first MaxUITemplates, and over reports it.
func UIResourceURIs(ts []tools.Tool) (uris []string, over bool) {
	seen := map[string]bool{}
	for i := range ts {
		if u := UIResourceURI(&ts[i]); u != "" && !seen[u] {
			seen[u] = true
			uris = append(uris, u)
		}
	}
	sorting.Func(uris, canon.CompareKeys)
	if len(uris) > MaxUITemplates {
		return uris[:MaxUITemplates], true
	}
	return uris, false
}

// ReadUITemplate reads a resources/read answer for a UI template — its
// result, or the JSON-RPC response carrying it — into its part hashes. A
// result without a contents array of objects (a JSON-RPC error included)
// is a cerr.ToolsMalformed: the template could not be read, never an empty
// one.
func ReadUITemplate(raw string) (Hashes, error) {
	h, _, err := ReadUITemplateHanded(raw)
	return h, err
}

// ReadUITemplateHanded is ReadUITemplate that also answers the result a
// host hands its renderer: {"contents": […]}, the content items as
// compared, and nothing else of the answer. A result's other members (its
// own _meta, unknown members, a "Contents" a case-insensitive decoder may
// take for contents) are in no part's hash, so they never reach a renderer.
func ReadUITemplateHanded(raw string) (Hashes, canon.Value, error) {
	v, err := canon.ParseAnswerString(raw)
	if err != nil {
		return nil, canon.Value{}, asMalformed(err)
	}
	if v.Kind() == canon.Object && v.Has("jsonrpc") {
		if e, ok := v.Get("error"); ok {
			return nil, canon.Value{}, malformed("the server answered resources/read with a JSON-RPC error: %s", clip(string(canon.Canonical(e))))
		}
		v, _ = v.Get("result")
	}
	if v.Kind() != canon.Object {
		return nil, canon.Value{}, malformed("a resources/read result is %s, not an object", v.Kind())
	}
	cs, ok := v.Get("contents")
	if !ok || cs.Kind() != canon.Array {
		return nil, canon.Value{}, malformed("a resources/read result without a contents array")
	}
	bodies := make([]canon.Value, len(cs.Elems()))
	metas := make([]canon.Value, len(cs.Elems()))
	for i, c := range cs.Elems() {
		if c.Kind() != canon.Object {
			return nil, canon.Value{}, malformed("contents[%d] is %s, not an object", i, c.Kind())
		}
		bodies[i] = c.Without("_meta")
		metas[i], _ = c.Get("_meta")
	}
	return Hashes{UIContents: canon.SHA256Hex(canon.Arr(bodies...)), UIMeta: canon.SHA256Hex(canon.Arr(metas...))}, canon.Obj(canon.M(UIContents, cs)), nil
}

// UIValue is a UI template's hashes as an object in canonical order.
func (h Hashes) UIValue() canon.Value {
	ms := make([]canon.Member, len(UIParts))
	for i, p := range UIParts {
		ms[i] = canon.M(p, canon.Str(h[p]))
	}
	return canon.Obj(ms...)
}
