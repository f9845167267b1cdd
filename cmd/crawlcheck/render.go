package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// recordView is what the summary shows of a record, beyond preflight.Record.
type recordView struct {
	Server struct {
		ApprovedURL     string `json:"approved_url"`
		ObservedURL     string `json:"observed_url"`
		Identity        string `json:"identity"`
		Handshake       string `json:"handshake"`
		ProtocolVersion string `json:"protocol_version"`
	} `json:"server"`
	Baseline struct {
		Format      string `json:"format"`
		ServerName  string `json:"server_name"`
		Count       int    `json:"count"`
		Trust       string `json:"trust"`
		TrustReason string `json:"trust_reason"`
		KeyID       string `json:"key_id"`
		ApprovedAt  string `json:"approved_at"`
	} `json:"baseline"`
	Policy struct {
		Version string `json:"version"`
		Source  string `json:"source"`
	} `json:"policy"`
	CheckedAt string `json:"checked_at"`
}

// printRecord writes a readable summary of a record: the effect, what was
// compared, every observation with the description text that moved, and
// what happens to each tool.
func printRecord(w io.Writer, rec preflight.Record) {
	var v recordView
	_ = json.Unmarshal(rec.Raw, &v) // a record the core wrote has this shape
	say(w, "effect    %s (%s mode)\n", rec.Effect, rec.Mode)
	if rec.Would != nil {
		say(w, "would     %s in enforce mode\n", rec.Would.Effect)
	}
	server := v.Server.ObservedURL
	if server == "" {
		server = v.Server.ApprovedURL
	}
	say(w, "server    %s (identity %s", orNone(server), v.Server.Identity)
	if v.Server.Handshake != "" {
		say(w, ", %s %s", v.Server.Handshake, v.Server.ProtocolVersion)
	}
	say(w, ")\n")
	trust := v.Baseline.Trust
	if v.Baseline.TrustReason != "" {
		trust += ": " + v.Baseline.TrustReason
	}
	if v.Baseline.KeyID != "" {
		trust += ", key " + v.Baseline.KeyID
	}
	name := ""
	if v.Baseline.ServerName != "" {
		name = " " + v.Baseline.ServerName
	}
	say(w, "baseline  %s%s, %d tools, %s, approved %s\n", v.Baseline.Format, name, v.Baseline.Count, trust, v.Baseline.ApprovedAt)
	o := rec.Observed
	switch {
	case o.Failure != "":
		say(w, "observed  nothing: %s\n", o.Failure)
	case o.Malformed:
		say(w, "observed  %d page(s), malformed\n", o.Pages)
	default:
		count := 0
		if o.Count != nil {
			count = *o.Count
		}
		say(w, "observed  %d tools in %d page(s)", count, o.Pages)
		if o.Truncated {
			say(w, ", truncated: %s", o.Truncation)
		}
		say(w, "\n")
	}
	say(w, "policy    %s (%s)\n", v.Policy.Version, v.Policy.Source)
	say(w, "\nobservations\n")
	for _, f := range rec.Observations {
		subject := f.Tool + f.Item // one of them, or neither
		if f.Part != "" {
			subject += " " + f.Part
		}
		effect := f.Effect
		if f.Would != "" && f.Would != f.Effect {
			effect += " (would " + f.Would + ")"
		}
		say(w, "  %-24s %-24s %s\n", f.Observation, subject, effect)
		printDetail(w, f.Detail)
	}
	if len(rec.Tools) > 0 {
		say(w, "\ntools\n")
		for _, name := range sortedKeys(rec.Tools) {
			e := rec.Tools[name]
			note := ""
			if withheld(rec, name) {
				note = "  withheld"
			}
			say(w, "  %-24s %s%s\n", name, e, note)
		}
	}
	for _, list := range sortedKeys(rec.Features) {
		// The prompts, resources and templates compared (issue 35): a
		// host hands over only those that proceed.
		say(w, "\n%s\n", strings.ReplaceAll(list, "_", " "))
		if len(rec.Features[list]) == 0 {
			// Compared, and the server offers none: said, so an empty
			// heading is not read as a list left out.
			say(w, "  none offered\n")
		}
		for _, key := range sortedKeys(rec.Features[list]) {
			e := rec.Features[list][key]
			note := ""
			if e != "proceed" && e != "proceed_recorded" {
				note = "  withheld"
			}
			say(w, "  %-24s %s%s\n", key, e, note)
		}
	}
	say(w, "\nrecord    %s\n", rec.RecordSHA256)
}

// withheld says whether the core's handoff withholds a tool from the model
// (every tool, for a record without one: it hands nothing over).
func withheld(rec preflight.Record, name string) bool {
	return rec.Handoff == nil || slices.Contains(rec.Handoff.Withheld, name)
}

// printDetail writes an observation's detail: a description diff as the
// text that moved, anything else as compact JSON.
func printDetail(w io.Writer, detail json.RawMessage) {
	if len(detail) == 0 || string(detail) == "null" || string(detail) == "{}" {
		return
	}
	var d struct {
		DescriptionDiff []diffOp        `json:"description_diff"`
		Classes         []string        `json:"classes"`
		ClassEvidence   []classEvidence `json:"class_evidence"`
	}
	if json.Unmarshal(detail, &d) != nil {
		say(w, "      %s\n", detail)
		return
	}
	printClasses(w, d.Classes, d.ClassEvidence)
	if d.DescriptionDiff != nil {
		printTextDiff(w, d.DescriptionDiff)
		return
	}
	if ops := instructionsDiff(detail); ops != nil {
		printTextDiff(w, ops)
		return
	}
	if d.Classes != nil {
		return
	}
	say(w, "      %s\n", detail)
}

// classEvidence is one class of a change and the inserted text that
// showed it, as the core writes them (docs/scan.md, "Change classes").
type classEvidence struct {
	Class string `json:"class"`
	Text  string `json:"text"`
}

// classSays is what each class of a change tells the person approving
// it, most dangerous first as the core orders them.
var classSays = map[string]string{
	"concealment":   "hides something from you",
	"instruction":   "adds an instruction to the agent",
	"cross_tool":    "names another tool or server",
	"destination":   "adds a destination (URL, address, path or account)",
	"capability":    "changes what the tool accepts or declares",
	"documentation": "adds documentation (examples, parameter help)",
	"editorial":     "wording only",
}

// printClasses writes what a change introduces, one class a line with the
// text that showed it, before its word diff: the dangerous change is the
// first thing read, the harmless one says so.
func printClasses(w io.Writer, classes []string, evidence []classEvidence) {
	for _, c := range classes {
		says, ok := classSays[c]
		if !ok {
			says = "a class this version does not know: " + c
		}
		mark := "!"
		if c == "editorial" || c == "documentation" {
			mark = "·"
		}
		text := ""
		for _, e := range evidence {
			if e.Class == c {
				text = e.Text
			}
		}
		if text == "" {
			say(w, "      %s %s\n", mark, says)
			continue
		}
		say(w, "      %s %s: \"%s\"\n", mark, says, text)
	}
}

// printClassesOf writes the classes an observation's detail carries, if
// any (printClasses).
func printClassesOf(w io.Writer, detail json.RawMessage) {
	var d struct {
		Classes       []string        `json:"classes"`
		ClassEvidence []classEvidence `json:"class_evidence"`
	}
	if len(detail) > 0 && json.Unmarshal(detail, &d) == nil {
		printClasses(w, d.Classes, d.ClassEvidence)
	}
}

// diffOp is one segment of a description_diff or instructions_diff.
type diffOp struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// printTextDiff writes a description or instructions diff one segment a line: "=" kept,
// "-" removed, "+" inserted.
func printTextDiff(w io.Writer, ops []diffOp) {
	for _, op := range ops {
		mark := map[string]string{"equal": "=", "delete": "-", "insert": "+"}[op.Op]
		if mark == "" {
			mark = "?"
		}
		say(w, "      %s %s\n", mark, op.Text)
	}
}

// diffResult is the core's diff answer.
type diffResult struct {
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Modified []struct {
		Name            string   `json:"name"`
		Parts           []string `json:"parts"`
		ToolChanged     bool     `json:"tool_changed"`
		DescriptionDiff []diffOp `json:"description_diff"`
		SchemaPaths     []struct {
			Change string `json:"change"`
			Path   string `json:"path"`
		} `json:"schema_paths"`
		SchemaPathsTruncated bool            `json:"schema_paths_truncated"`
		Classes              []string        `json:"classes"`
		ClassEvidence        []classEvidence `json:"class_evidence"`
	} `json:"modified"`
	Unchanged  int      `json:"unchanged"`
	BlindParts []string `json:"blind_parts"`
}

func (d diffResult) same() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Modified) == 0
}

// printDiff writes a diff answer for a person to read.
func printDiff(w io.Writer, d diffResult) {
	printDiffNoting(w, d, "no change")
}

// printDiffNoting is printDiff that says a list without changes as
// noChange: approve says "no tool changed" when the server changed
// otherwise (its launched package), never "no change".
func printDiffNoting(w io.Writer, d diffResult, noChange string) {
	if d.same() {
		say(w, "%s (%d tools)\n", noChange, d.Unchanged)
	}
	for _, n := range d.Added {
		say(w, "added     %s\n", n)
	}
	for _, n := range d.Removed {
		say(w, "removed   %s\n", n)
	}
	for _, m := range d.Modified {
		parts := strings.Join(m.Parts, ", ")
		if m.ToolChanged {
			parts = "changed; the baseline cannot say which part"
		}
		say(w, "modified  %s (%s)\n", m.Name, parts)
		printClasses(w, m.Classes, m.ClassEvidence)
		if m.DescriptionDiff != nil {
			printTextDiff(w, m.DescriptionDiff)
		}
		for _, p := range m.SchemaPaths {
			say(w, "      schema %s %s\n", p.Change, p.Path)
		}
		if m.SchemaPathsTruncated {
			say(w, "      schema … (more paths not listed)\n")
		}
	}
	if len(d.BlindParts) > 0 {
		say(w, "not compared (the baseline does not pin them): %s\n", strings.Join(d.BlindParts, ", "))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
