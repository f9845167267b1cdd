package core

import (
	"slices"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/scan"
	"github.com/crawlcheck/verifier/core/internal/sorting"
)

// The approval scan of prompts, resources and resource templates (issue
// 35, item 2): what a person approving them reads beside what changed, as
// the scan op is for tools. The lockfile keeps their hashes, not their
// texts, so a changed prompt has no word diff to show: the scan of the
// text the server offers now is what a person reads.

// scanItemsFields are the request members of scan_items.
var scanItemsFields = []Field{
	need("features", "object `{prompts, resources, resource_templates}`", "the lists as `observed.features` gives them (`{pages, page_cap_reached?}` each; a list absent is not scanned, `ui_templates` and `declared: false` are ignored)"),
	may("items", "array of `{list, key}`", "the items whose findings to keep (the lists still count whole: a truncated list is refused)"),
}

// opScanItems scans every string of every item (its name, title,
// description, arguments and their descriptions, unknown members: all of
// them, as a loose client may read any) as text a model reads, each as a
// tool's description is scanned.
func opScanItems(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	fo, ok := rd.Object("features")
	if !ok && !rd.Failed() {
		rd.Fail(cerr.New(cerr.BadRequest, "%s is required", rd.Field("features")))
	}
	type kept struct{ list, key string }
	var only map[kept]bool
	if rd.Has("items") {
		only = map[kept]bool{}
	}
	rd.Objects("items", "{list, key}", []string{"list", "key"}, func(_ int, o *req.Reader) {
		l := o.OneOf("list", "", features.Prompts.Name, features.Resources.Name, features.Templates.Name)
		only[kept{l, o.Str("key", true)}] = true
	})
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	fr := fo.Read()
	var lists []features.List
	for _, k := range features.Kinds {
		lo, ok := fr.Object(k.Name)
		if !ok || fr.Failed() {
			continue
		}
		lr := lo.Read()
		if lr.Has("declared") {
			continue
		}
		pages := lr.Pages("pages")
		capReached := lr.Bool("page_cap_reached")
		if err := lr.Err(); err != nil {
			return canon.Value{}, err
		}
		l, err := features.FromPages(k, pages, capReached)
		if err != nil {
			return canon.Value{}, cerr.In(lo.Path+".pages", err)
		}
		if l.Truncated != "" {
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s is truncated (%s): a scan of part of a list would call the rest clean", lo.Path, l.Truncated)
		}
		lists = append(lists, l)
	}
	if err := fr.Err(); err != nil {
		return canon.Value{}, err
	}
	var found []canon.Value
	kinds := map[string]int{}
	severity := scan.Severity(0)
	for _, l := range lists {
		keys := make([]string, len(l.Items))
		for i, it := range l.Items {
			keys[i] = it.Key
		}
		texts := scan.NewTexts(keys)
		for _, it := range l.Items {
			if only != nil && !only[kept{l.Kind.Name, it.Key}] {
				continue
			}
			eachString(it.Raw, "", func(part, text string) {
				// In the text's order (the scanner answers in its passes' order).
				fs := slices.Clone(texts.Text(text, it.Key))
				sorting.Func(fs, func(a, b scan.Finding) int {
					if c := a.Offset - b.Offset; c != 0 {
						return c
					}
					if c := a.Rule - b.Rule; c != 0 {
						return c
					}
					return a.Length - b.Length
				})
				for _, f := range fs {
					rule := scan.Rules[f.Rule]
					kinds[rule.Kind]++
					severity = max(severity, rule.Severity)
					if len(found) == scan.MaxFindings {
						continue
					}
					var ms []canon.Member
					if f.Hidden != "" {
						ms = append(ms, canon.M("hidden", canon.Str(f.Hidden)))
					}
					found = append(found, canon.Obj(append(ms,
						canon.M("item", canon.Str(it.Key)),
						canon.M("kind", canon.Str(rule.Kind)),
						canon.M("length", canon.Int(int64(f.Length))),
						canon.M("list", canon.Str(l.Kind.Name)),
						canon.M("offset", canon.Int(int64(f.Offset))),
						canon.M("part", canon.Str(part)),
						canon.M("rule", canon.Str(rule.ID)),
						canon.M("severity", canon.Str(rule.Severity.String())),
						canon.M("span", canon.Str(f.Span)),
					)...))
				}
			})
		}
	}
	km := make([]canon.Member, 0, len(kinds))
	for _, k := range features.Keys(kinds) {
		km = append(km, canon.M(k, canon.Int(int64(kinds[k]))))
	}
	return canon.Obj(
		canon.M("findings", canon.Arr(found...)),
		canon.M("kinds", canon.Obj(km...)),
		canon.M("rules_sha256", canon.Str(scan.RulesSHA256())),
		canon.M("severity", canon.Str(severity.String())),
	), nil
}

// eachString calls fn with every string value under v and its JSON
// Pointer, members in canonical order, elements in order.
func eachString(v canon.Value, at string, fn func(part, text string)) {
	switch v.Kind() {
	case canon.String:
		s, _ := v.Str()
		fn(at, s)
	case canon.Object:
		for _, m := range v.Members() {
			eachString(m.Value, at+"/"+pointerToken(m.Key), fn)
		}
	case canon.Array:
		for i, e := range v.Elems() {
			eachString(e, at+"/"+strconv.Itoa(i), fn)
		}
	}
}

// pointerToken escapes a member name for a JSON Pointer (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
