package core

import (
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// The refusal of a prompt, resource, resource template or ui:// template
// a host does not hand over (issue 35, item 2): the refusal op's item
// member. Every host refuses a prompts/get or resources/read the record
// does not cover with the same words, the core's, as it refuses a tool.

// refusalItemLists are the lists an item refusal may name: the record's
// three, and the UI templates a host reads for a renderer.
var refusalItemLists = []string{features.Prompts.Name, features.Resources.Name, features.Templates.Name, uiTemplatesList}

const uiTemplatesList = "ui_templates"

// The reasons a ui:// template read is refused without a part that
// changed: ui_template_check's reasons, and not_named (no tool the host
// hands over names the URI, so it is not read at all).
var uiRefusalReasons = []string{"not_named", "not_compared", "not_approved", "malformed"}

// refusalItemFields are the members of the refusal op's item.
var refusalItemFields = []Field{
	need("list", "string", "`prompts`, `resources`, `resource_templates` (the record's `features` lists) or `ui_templates` (a ui:// template read for a renderer)"),
	may("key", "string", "the prompt's name, the resource's uri, the template's uriTemplate or the ui:// URI asked for; absent to refuse a whole list the record compared none of (a listing)"),
	may("parts", "array of strings", "`ui_templates` only: the parts `ui_template_check` answered differ"),
	may("reason", "string", "`ui_templates` only, without `parts`: `not_named` (no tool handed over names it) or the reason `ui_template_check` answered (`not_compared`, `not_approved`, `malformed`)"),
}

// uiReasonWords are the reasons of a refused ui:// template in words.
var uiReasonWords = map[string]string{
	"not_named":    "no tool handed over names it",
	"not_compared": "the check compared no UI templates against this lockfile (it pins none it may use; lock the server again to pin them)",
	"not_approved": "the lockfile does not pin it",
	"malformed":    "its resources/read answer is malformed",
}

// refusalItem reads the refusal op's item and words its refusal.
func refusalItem(rd *req.Reader, rec canon.Value) (string, bool) {
	o, ok := rd.Object("item")
	if !ok || rd.Failed() || !rd.Fail(o.Only(names(refusalItemFields)...)) {
		return "", false
	}
	ir := o.Read()
	list := ir.OneOf("list", "", refusalItemLists...)
	// Without a key, the whole list is refused (a listing of a list the
	// check compared none of); a ui:// template is always named.
	hasKey := ir.Has("key")
	key := ir.Str("key", list == uiTemplatesList)
	var parts []string
	reason := ""
	if list == uiTemplatesList {
		parts = ir.Strings("parts")
		reason = ir.OneOf("reason", "", uiRefusalReasons...)
		if !ir.Failed() && (len(parts) == 0) == (reason == "") {
			ir.Fail(cerr.New(cerr.BadRequest, "%s of ui_templates gives parts or a reason, one of them", o.Path))
		}
	} else if !ir.Failed() && (ir.Has("parts") || ir.Has("reason")) {
		ir.Fail(cerr.New(cerr.BadRequest, "%s: parts and reason are of ui_templates only", o.Path))
	}
	if !rd.Fail(ir.Err()) {
		return "", false
	}
	text, ok := itemRefusalText(rec, list, key, hasKey, parts, reason)
	if !ok {
		rd.Fail(cerr.New(cerr.BadRequest, "%s: the record compared %s: refuse an item of it by its key", o.Path, strings.ReplaceAll(list, "_", " ")))
		return "", false
	}
	return text, true
}

// itemRefusalText words the refusal of key of list (a ui:// template's by
// its parts or reason): the refusal op's item, and the session engine's
// refusal of a prompts/get or resources/read. Without a key (hasKey
// false) the whole list is refused, which only a list the record compared
// none of may be: ok is false for another.
func itemRefusalText(rec canon.Value, list, key string, hasKey bool, parts []string, reason string) (string, bool) {
	suffix := recordSuffix(memberStr(rec, "record_sha256"))
	if list == uiTemplatesList {
		why := uiReasonWords[reason]
		if len(parts) > 0 {
			shown := make([]string, len(parts))
			for i, p := range parts {
				shown[i] = textsafe.Escape(p)
			}
			why = "its " + strings.Join(shown, " and ") + " changed since it was approved"
		}
		return "crawlcheck: UI template \"" + textsafe.Escape(key) + "\" refused: " + why + suffix, true
	}
	what := map[string]string{features.Prompts.Name: "prompt", features.Resources.Name: "resource", features.Templates.Name: "resource template"}[list]
	head := "crawlcheck: " + what + " \"" + textsafe.Escape(key) + "\" "
	plural := strings.ReplaceAll(list, "_", " ")
	if !hasKey {
		head = "crawlcheck: " + plural + " "
	}
	all, _ := rec.Get("features")
	items, compared := all.Get(list)
	if !compared || items.Kind() != canon.Object {
		base, _ := rec.Get("baseline")
		why := "this host read none of them; the record names them in baseline.blind_parts"
		switch memberStr(base, "features") {
		case "absent", "not_applicable":
			why = "the lockfile pins none; lock the server again to pin them"
		case "ignored":
			why = "the lockfile's features were added after it was signed, so they are not used"
		}
		return head + "refused: the check compared no " + plural + " (" + why + ")" + suffix, true
	}
	if !hasKey {
		return "", false
	}
	e, listed := items.Get(key)
	effect, _ := e.Str()
	if !listed {
		return head + "refused: not in the checked list" + suffix, true
	}
	return head + itemWhy(rec, list, key, effect) + suffix, true
}

// itemWhy is an item's effect in words and the observations of that item
// that decided it (all of its own when every one proceeded, the
// session's when it has none: a paused session withholds every item);
// the first says which part changed and what differed.
func itemWhy(rec canon.Value, list, key, effect string) string {
	verb := refusalVerb(effect)
	own := continuity.ItemObservations(list)
	obs, _ := rec.Get("observations")
	var decided, all []canon.Value
	for _, o := range obs.Elems() {
		it, _ := o.Get("item")
		name, isItem := it.Str()
		if !isItem || name != key || !slices.ContainsFunc(own, func(n policy.Observation) bool { return string(n) == memberStr(o, "observation") }) {
			continue
		}
		all = append(all, o)
		if e := memberStr(o, "effect"); e != "proceed" && e != "proceed_recorded" {
			decided = append(decided, o)
		}
	}
	if len(decided) == 0 {
		decided = all
	}
	b := verb + " (" + textsafe.Escape(effect) + ")"
	if len(decided) == 0 {
		// Withheld by the session's effect alone: its words say why.
		return b + ": the session " + effectWhy(rec, "", false, memberStr(rec, "effect"), "effect")
	}
	b += ": " + observationNames(decided)
	server, _ := rec.Get("server")
	part := ""
	if p, _ := decided[0].Get("part"); p.Kind() == canon.String {
		s, _ := p.Str()
		part = textsafe.Escape(s)
	}
	switch what := whatDiffered(decided[0], server); {
	case part != "" && what != "":
		b += " (" + part + ": " + what + ")"
	case part != "" || what != "":
		b += " (" + part + what + ")"
	}
	return b
}
