package core

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// The refusal of a prompt, resource, resource template or ui:// template a
// host does not hand over (issue 35): the words of the error a host raises
// from prompts/get, resources/read and the lists, one wording for Go,
// JavaScript and Python, as the refusal of a tool is.

// itemLists are the lists refusal's request.list names.
var itemLists = []string{"prompts", "resources", "resource_templates", "ui_templates"}

// itemWhat is how one item of each list is named to a person, and the
// prefix of the observations of that list (prompt_added, ...).
var itemWhat = map[string][2]string{
	"prompts":            {"prompt", "prompt"},
	"resources":          {"resource", "resource"},
	"resource_templates": {"resource template", "resource_template"},
}

// uiReasons word ui_template_check's reason.
var uiReasons = map[string]string{
	"not_compared": "the check compared no UI templates (the lockfile pins none; lock the server again to pin them)",
	"not_approved": "the lockfile pins no such template",
	"malformed":    "its answer is not a resources/read result the core can read",
}

// itemRefusalText words why key of list is not handed over. For a list:
// the check did not compare the list (the record's features do not name
// it), or the item is not in the checked list, or its effect withholds it,
// with the observations that decided and what differed. For a ui://
// template: check is ui_template_check's answer for it, absent when no tool
// handed over names it.
func itemRefusalText(rec canon.Value, list, key string, hasKey bool, check canon.Value, hasCheck bool) (string, error) {
	str := func(v canon.Value, k string) string {
		x, _ := v.Get(k)
		s, _ := x.Str()
		return s
	}
	suffix := recordSuffix(str(rec, "record_sha256"))
	if list == "" {
		return "", cerr.New(cerr.BadRequest, "request.item and request.check are an item's: give request.list")
	}
	if list == "ui_templates" {
		if !hasKey {
			return "", cerr.New(cerr.BadRequest, "request.item is required with list ui_templates: the ui:// URI refused")
		}
		why := "no tool handed over names it"
		if hasCheck {
			if same, _ := check.Get("same"); same.String() == "true" {
				return "", cerr.New(cerr.BadRequest, "request.check says the template is the one approved: nothing is refused")
			}
			var parts []string
			if ps, ok := check.Get("parts"); ok {
				for _, p := range ps.Elems() {
					s, _ := p.Str()
					parts = append(parts, textsafe.Escape(s))
				}
			}
			reason := str(check, "reason")
			switch {
			case len(parts) > 0:
				why = "its " + strings.Join(parts, " and ") + " changed since it was approved"
			case uiReasons[reason] != "":
				why = uiReasons[reason]
			default:
				why = "not the template approved (" + textsafe.Escape(reason) + ")"
			}
		}
		return "crawlcheck: UI template \"" + textsafe.Escape(key) + "\" refused: " + why + suffix, nil
	}
	if hasCheck {
		return "", cerr.New(cerr.BadRequest, "request.check is a ui:// template's: give it only with list ui_templates")
	}
	what := itemWhat[list]
	named := what[0] + " \"" + textsafe.Escape(key) + "\""
	if !hasKey {
		named = strings.ReplaceAll(list, "_", " ")
	}
	fs, _ := rec.Get("features")
	items, compared := fs.Get(list)
	if !compared {
		return "crawlcheck: " + named + " refused: the check compared no " + strings.ReplaceAll(list, "_", " ") +
			" (the lockfile pins none; lock the server again to pin them)" + suffix, nil
	}
	if !hasKey {
		return "", cerr.New(cerr.BadRequest, "request.item is required: the record compared %s, so only an item of it is refused", list)
	}
	e, offered := items.Get(key)
	if !offered {
		return "crawlcheck: " + named + " refused: not in the checked list" + suffix, nil
	}
	effect, _ := e.Str()
	return "crawlcheck: " + named + " " + itemWhy(rec, what[1], key, effect) + suffix, nil
}

// itemWhy is an item's effect in words and the observations of its list
// that name it and did not proceed (all of them when every one did), the
// first saying what differed, as effectWhy says it for a tool.
func itemWhy(rec canon.Value, prefix, key, effect string) string {
	str := func(v canon.Value, k string) string {
		x, _ := v.Get(k)
		s, _ := x.Str()
		return s
	}
	verb := refusalVerbs[effect]
	if verb == "" {
		verb = textsafe.Escape(effect)
	}
	b := verb + " (" + textsafe.Escape(effect) + ")"
	obs, _ := rec.Get("observations")
	var decided, all []canon.Value
	for _, o := range obs.Elems() {
		n := str(o, "observation")
		if it, _ := o.Get("item"); it.Kind() != canon.String || str(o, "item") != key ||
			(n != prefix+"_added" && n != prefix+"_removed" && n != prefix+"_changed") {
			continue
		}
		all = append(all, o)
		if e := str(o, "effect"); e != "proceed" && e != "proceed_recorded" {
			decided = append(decided, o)
		}
	}
	if len(decided) == 0 {
		decided = all
	}
	if len(decided) == 0 {
		return b
	}
	seen := map[string]bool{}
	var names []string
	for _, o := range decided {
		if n := str(o, "observation"); !seen[n] {
			seen[n] = true
			names = append(names, textsafe.Escape(n))
		}
	}
	b += ": " + strings.Join(names, ", ")
	// What differed: the item and part, then the detail as a tool's is
	// worded (a diff's inserted and deleted text, other members by name).
	first := decided[0]
	what := textsafe.Escape(key)
	if p := str(first, "part"); p != "" {
		what += " " + textsafe.Escape(p)
	}
	server, _ := rec.Get("server")
	if d := whatDiffered(first, server); d != "" {
		what += ": " + d
	}
	return b + " (" + what + ")"
}
