package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// The prompts, resources, resource templates and UI templates a host read
// beside the tools (issue 35): observed.features of continuity_check,
// continuity_handoff, make_lock and approve, and the ui_templates op that
// names which ui:// templates to read. docs/continuity.md, "Prompts,
// resources and UI templates".

// featuresFields are the members of observed.features.
var featuresFields = []Field{
	may("prompts", "object `{"+joinNames(featureListFields)+"}`", "the `prompts/list` walk"),
	may("resources", "object `{"+joinNames(featureListFields)+"}`", "the `resources/list` walk"),
	may("resource_templates", "object `{"+joinNames(featureListFields)+"}`", "the `resources/templates/list` walk"),
	may("ui_templates", "array of `{"+joinNames(uiTemplateFields)+"}`", "each ui:// template the `ui_templates` op named, read with `resources/read`"),
}

// featureListFields are the members of one list of observed.features.
var featureListFields = []Field{
	may("declared", "bool", "false: the server's capabilities do not declare the list, so the host did not ask (it offers none); no other member then"),
	may("pages", "array of page strings", "every page read, as received (the walk by `next_page` with its `list`)"),
	may("page_cap_reached", "bool", "the host stopped at its page cap"),
	may("failure", "string", "a host fault (as `observed.failure`) that ended the walk: the list is not compared, and the check records `features_incomplete`"),
}

// uiTemplateFields are the members of one UI template read.
var uiTemplateFields = []Field{
	need("uri", "string", "the ui:// URI read"),
	may("result", "page string", "the `resources/read` answer as received (its result, or the JSON-RPC response carrying it)"),
	may("failure", "string", "a host fault that kept it from being read (give `result` or `failure`)"),
}

// readFeatures reads observed.features; a host that read none gives none.
func readFeatures(or *req.Reader) continuity.ObservedFeatures {
	var f continuity.ObservedFeatures
	o, ok := or.Object("features")
	if !ok || or.Failed() || !or.Fail(o.Only(names(featuresFields)...)) {
		return f
	}
	fr := o.Read()
	f.Lists = map[string]continuity.ObservedList{}
	for _, k := range features.Kinds {
		lo, ok := fr.Object(k.Name)
		if !ok || fr.Failed() || !fr.Fail(lo.Only(names(featureListFields)...)) {
			continue
		}
		lr := lo.Read()
		var l continuity.ObservedList
		if lr.Has("declared") {
			if lr.Bool("declared") || len(lo.V.Members()) != 1 {
				lr.Fail(cerr.New(cerr.BadRequest, "%s is given only as false, and alone: a declared list gives its pages or a failure", lr.Field("declared")))
			}
			l.Undeclared = true
		} else {
			l.Failure = lr.OneOf("failure", "", continuity.HostFailures...)
			l.Pages = lr.Pages("pages")
			l.PageCapReached = lr.Bool("page_cap_reached")
			if !lr.Failed() && l.Failure == "" && !lr.Has("pages") {
				lr.Fail(cerr.New(cerr.BadRequest, "%s needs pages, or a failure saying why there are none", lo.Path))
			}
		}
		fr.Fail(lr.Err())
		f.Lists[k.Name] = l
	}
	if fr.Has("ui_templates") {
		f.UI = map[string]continuity.ObservedUI{}
	}
	fr.Objects("ui_templates", "{uri, result | failure}", names(uiTemplateFields), func(_ int, u *req.Reader) {
		uri := u.Str("uri", true)
		var t continuity.ObservedUI
		t.Failure = u.OneOf("failure", "", continuity.HostFailures...)
		t.Result = u.Page("result", false)
		if u.Failed() {
			return
		}
		if (t.Failure == "") == !u.Has("result") {
			u.Fail(cerr.New(cerr.BadRequest, "%s gives result or failure, one of them", u.O.Path))
			return
		}
		if _, dup := f.UI[uri]; dup {
			u.Fail(cerr.New(cerr.BadRequest, "%s: %s is read twice", u.O.Path, canon.Str(clipText(uri))))
			return
		}
		f.UI[uri] = t
	})
	or.Fail(fr.Err())
	return f
}

// lockFeatures is the features extension of a new lockfile, from what the
// host read (nil when it read none: the lockfile is made as before). Like
// the tool list, each list is pinned whole or the lockfile is refused, and
// so is every ui:// template the tools name: a lockfile never pins part of
// what a model is handed as if it were all of it.
func lockFeatures(f continuity.ObservedFeatures, ts []tools.Tool) (*lock.Features, error) {
	if f.Lists == nil && f.UI == nil {
		return nil, nil
	}
	lists := map[string][]features.Item{}
	for _, k := range features.Kinds {
		ol, ok := f.Lists[k.Name]
		switch {
		case !ok:
			continue
		case ol.Undeclared:
			lists[k.Name] = nil
			continue
		case ol.Failure != "":
			return nil, cerr.New(cerr.BadRequest, "request.observed.features.%s holds no whole list (%s): a lockfile pins the whole list or nothing", k.Name, ol.Failure)
		}
		l, err := features.FromPages(k, ol.Pages, ol.PageCapReached)
		if err != nil {
			return nil, cerr.In("request.observed.features."+k.Name+".pages", err)
		}
		if l.Truncated != "" {
			return nil, cerr.New(cerr.BadRequest, "request.observed.features.%s is truncated (%s): a lockfile pins the whole list or nothing", k.Name, l.Truncated)
		}
		lists[k.Name] = l.Items
	}
	var ui map[string]features.Hashes
	if f.UI != nil {
		uris, over := features.UIResourceURIs(ts)
		if over {
			return nil, cerr.New(cerr.BadRequest, "the tools name more than %d ui:// templates: a lockfile pins at most %d", features.MaxUITemplates, features.MaxUITemplates)
		}
		ui = map[string]features.Hashes{}
		for _, uri := range uris {
			t, ok := f.UI[uri]
			switch {
			case !ok:
				return nil, cerr.New(cerr.BadRequest, "request.observed.features.ui_templates does not hold %s, which a tool names: a lockfile pins every UI template or none", canon.Str(clipText(uri)))
			case t.Failure != "":
				return nil, cerr.New(cerr.BadRequest, "request.observed.features.ui_templates: %s could not be read (%s)", canon.Str(clipText(uri)), t.Failure)
			}
			h, err := features.ReadUITemplate(t.Result)
			if err != nil {
				return nil, cerr.In("request.observed.features.ui_templates "+canon.Str(clipText(uri)).String(), err)
			}
			ui[uri] = h
		}
	}
	return lock.NewFeatures(lists, ui), nil
}

// opUITemplates names the ui:// templates a host reads with resources/read
// at lock and check time: those the tools name in _meta.ui.resourceUri,
// distinct and sorted, at most features.MaxUITemplates.
func opUITemplates(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	obs := toolSource(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	uris, over := features.UIResourceURIs(obs.Tools)
	return canon.Obj(canon.M("uris", canon.Strs(nonNilStrs(uris))), canon.M("over", canon.BoolOf(over))), nil
}

func nonNilStrs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// walkList reads next_page's list: which list the page is of.
func walkList(rd *req.Reader) (features.Kind, bool) {
	name := rd.OneOf("list", "tools/list", "tools/list", features.Prompts.Method, features.Resources.Method, features.Templates.Method)
	k, ok := features.KindOf(name)
	return k, ok
}

// opUITemplateCheck checks a ui:// template read when a host renders it
// (MCP Apps) against the pin of the lockfile a record compared: the host
// hands the record it acts on, the lockfile, the URI and the answer as
// received. It answers same (true only when the record's baseline is
// this lockfile, its features extension was usable, it pins the URI, and
// every part is equal), the parts that differ, and why not when it cannot
// compare. A host renders nothing it does not answer same for.
func opUITemplateCheck(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	doc := rd.RequiredDoc("record")
	f := parseLock(rd, "lock")
	uri := rd.Str("uri", true)
	result := rd.Page("result", true)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	v, err := continuity.VerifyRecord(doc)
	if err != nil || !v.Valid {
		return canon.Value{}, cerr.New(cerr.RecordInvalid, "%s is not a continuity record that verifies", rd.Field("record"))
	}
	// template is the result a host hands its renderer, written from what
	// was compared (null unless same): never the host's parse of the answer.
	answer := func(same bool, parts []string, reason string, template canon.Value) (canon.Value, error) {
		t := canon.NullValue()
		if same {
			t = canon.Str(string(canon.Canonical(template)))
		}
		return canon.Obj(
			canon.M("same", canon.BoolOf(same)),
			canon.M("parts", canon.Strs(nonNilStrs(parts))),
			canon.M("reason", optStrValue(reason)),
			canon.M("template", t),
		), nil
	}
	base, _ := doc.Get("baseline")
	digest, _ := base.Get("sha256")
	status, _ := base.Get("features")
	if s, _ := digest.Str(); f.Crawlcheck == nil || s != continuity.LockDigest(f) {
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s was not made from %s", rd.Field("record"), rd.Field("lock"))
	}
	if s, _ := status.Str(); (s != "signed" && s != "unsigned") || f.Crawlcheck.Features == nil || f.Crawlcheck.Features.UI == nil {
		return answer(false, nil, "not_compared", canon.Value{})
	}
	pin, ok := f.Crawlcheck.Features.UI[uri]
	if !ok {
		return answer(false, nil, "not_approved", canon.Value{})
	}
	h, handed, err := features.ReadUITemplateHanded(result)
	if err != nil {
		return answer(false, nil, "malformed", canon.Value{})
	}
	var differ []string
	for _, p := range features.UIParts {
		if h[p] != pin[p] {
			differ = append(differ, p)
		}
	}
	return answer(len(differ) == 0, differ, "", handed)
}

func optStrValue(s string) canon.Value { return canon.StrOrNull(s, s != "") }
