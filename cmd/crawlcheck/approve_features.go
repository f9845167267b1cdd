package main

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// What approve shows of the prompts, resources and resource templates that
// changed since approval (issue 35, item 2): each item an observation of
// the record names, the parts that changed, the item as the server offers
// it now — the object the core writes for a host to hand over, never a
// parse of the page — and the scan of its texts. There is no word diff:
// the lockfile pins a hash of each part of an item, not its text (tools
// keep their descriptions in the lockfile; items do not), so the approved
// text is not known. The person is then asked whether to approve them too
// (--features with --yes): the core's approve_features pins every list
// read as offered now; left unapproved, the old lockfile's pins are kept
// and the items stay withheld.

// changedItem is one prompt, resource or template an observation names.
type changedItem struct {
	list, key    string   // list "ui_templates": a ui:// template, key its URI
	tool         string   // for a ui:// template: the tool that names it
	observations []string // the record's observations of it, in order
	parts        []string // the parts they name
	now          string   // the core's object of it as offered now; "" when not offered
}

// itemLabels name each list's item for a person.
var itemLabels = map[string]string{"prompts": "prompt", "resources": "resource", "resource_templates": "resource template", "ui_templates": "UI template", "": "item"}

// uiTemplateChanged is the observation of a changed ui:// template, which
// the record names under the tool that names the template: approved with
// the items (approve_features), not by naming the tool.
const uiTemplateChanged = "ui_template_changed"

// uiTemplateURI is the ui:// URI an observation's detail names.
func uiTemplateURI(detail json.RawMessage) string {
	var d struct {
		URI string `json:"uri"`
	}
	if len(detail) == 0 || json.Unmarshal(detail, &d) != nil {
		return ""
	}
	return d.URI
}

// changedItems are the items the record's observations name, each with
// its object as the core writes it for the observed lists: the check again
// in observe mode, whose handoff hands every offered item over.
func changedItems(settings preflight.Settings, lock []byte, obs preflight.Observation, rec preflight.Record, now time.Time) ([]changedItem, error) {
	var out []changedItem
	for _, f := range rec.Observations {
		list, key, tool := "", f.Item, ""
		switch {
		case f.Observation == uiTemplateChanged:
			list, key, tool = "ui_templates", uiTemplateURI(f.Detail), f.Tool
		case f.Item == "":
			continue
		default:
			// "": not offered any more (removed): no list holds it now.
			for _, l := range []string{"prompts", "resources", "resource_templates"} {
				if _, ok := rec.Features[l][f.Item]; ok {
					list = l
				}
			}
		}
		i := slices.IndexFunc(out, func(c changedItem) bool { return c.list == list && c.key == key })
		if i < 0 {
			out = append(out, changedItem{list: list, key: key, tool: tool})
			i = len(out) - 1
		}
		if !slices.Contains(out[i].observations, f.Observation) {
			out[i].observations = append(out[i].observations, f.Observation)
		}
		if f.Part != "" && !slices.Contains(out[i].parts, f.Part) {
			out[i].parts = append(out[i].parts, f.Part)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	observe := settings
	observe.Mode = "observe"
	all, err := preflight.Check(preflight.Request{Settings: observe, Lock: lock, Observation: obs, Now: now})
	if err != nil {
		return out, err
	}
	if all.Handoff != nil {
		for i := range out {
			for _, it := range all.Handoff.Features[out[i].list].Items {
				if it.Key == out[i].key {
					out[i].now = it.Item
				}
			}
		}
	}
	return out, nil
}

// printChangedItems shows the changed items, their objects and the scan of
// their texts; it reports whether there was any.
func printChangedItems(w io.Writer, items []changedItem, obs preflight.Observation, lockCmd string) bool {
	if len(items) == 0 {
		return false
	}
	say(w, "\nprompts, resources, resource templates and UI templates changed since approval:\n")
	var merged preflight.Scan
	for _, it := range items {
		say(w, "  %-18s %s  %s", itemLabels[it.list], it.key, strings.Join(it.observations, ", "))
		if len(it.parts) > 0 {
			say(w, " (%s)", strings.Join(it.parts, ", "))
		}
		say(w, "\n")
		if it.list == "ui_templates" {
			// The page a host renders: its bytes are not shown here (HTML
			// and script, not text a model reads), only whose it is.
			say(w, "    named by tool %s; read it before approving\n", it.tool)
			continue
		}
		if it.now == "" {
			say(w, "    no longer offered\n")
			continue
		}
		say(w, "    as offered now: %s\n", it.now)
		s, err := scanItem(it, obs)
		if err != nil {
			say(w, "    scan: not run: %s\n", err)
			continue
		}
		mergeScan(&merged, s)
	}
	say(w, "  (no word diff: the lockfile pins a hash of each part of an item, not its text)\n")
	if merged.RulesSHA256 != "" {
		printScan(w, "scan of the prompts, resources and resource templates changed", merged)
	}
	say(w, "approving them pins every list read as offered now; left unapproved, they stay withheld\n  (approve again, or pin them anew with %s)\n", lockCmd)
	return true
}

// textPart is one string of an item's object and where it lies in the
// text scanned.
type textPart struct {
	pointer    string
	start, end int
}

// scanItem scans the strings of an item's object as the core scans free
// text (the scan op's text rules, as for the server's instructions, with
// the observed tool list for references to its tools), one string per
// line; each finding is told by its string's JSON Pointer and offset.
func scanItem(it changedItem, obs preflight.Observation) (preflight.Scan, error) {
	dec := json.NewDecoder(strings.NewReader(it.now))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return preflight.Scan{}, err
	}
	var text strings.Builder
	var parts []textPart
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case string:
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			parts = append(parts, textPart{pointer: p, start: text.Len(), end: text.Len() + len(x)})
			text.WriteString(x)
		case []any:
			for i, e := range x {
				walk(p+"/"+strconv.Itoa(i), e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(p+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), x[k])
			}
		}
	}
	walk("", v)
	req := map[string]any{"pages": pageTexts(obs), "names": []string{}, "instructions": text.String()}
	if obs.PageCapReached {
		req["page_cap_reached"] = true
	}
	var s preflight.Scan
	if err := corecall.Into("scan", req, &s); err != nil {
		return s, err
	}
	label := itemLabels[it.list] + " " + strconv.Quote(it.key)
	for i := range s.Findings {
		f := &s.Findings[i]
		f.Tool = label
		for _, p := range parts {
			if f.Offset >= p.start && f.Offset <= p.end {
				f.Part, f.Offset = p.pointer, f.Offset-p.start
				break
			}
		}
	}
	return s, nil
}

// mergeScan adds s's findings and counts to into, the severity the
// stronger of the two in the core's order.
func mergeScan(into *preflight.Scan, s preflight.Scan) {
	order := preflight.ScanSeverities()
	if into.RulesSHA256 == "" || slices.Index(order, s.Severity) > slices.Index(order, into.Severity) {
		into.Severity = s.Severity
	}
	into.RulesSHA256 = s.RulesSHA256
	if into.Kinds == nil {
		into.Kinds = map[string]int{}
	}
	for k, n := range s.Kinds {
		into.Kinds[k] += n
	}
	into.Findings = append(into.Findings, s.Findings...)
}

// relockCommand is the command that pins a target's prompts and
// resources anew, for a person to read (each word quoted for a shell).
func relockCommand(tg target, lockPath string) string {
	src := "--server " + shellQuote(strings.Join(mapQuote(tg.args), " "))
	switch {
	case tg.url != "" && tg.sse:
		src = "--sse " + shellQuote(tg.url)
	case tg.url != "":
		src = "--url " + shellQuote(tg.url)
	}
	return "crawlcheck lock " + src + " -o " + shellQuote(lockPath)
}

// mapQuote quotes each word that a shell would not read as itself.
func mapQuote(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w
		if w == "" || strings.ContainsFunc(w, func(c rune) bool {
			return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("@%+=:,./-_", c))
		}) {
			out[i] = shellQuote(w)
		}
	}
	return out
}
