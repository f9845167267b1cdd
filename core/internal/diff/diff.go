// Package diff compares observed tools with a baseline and says what moved.
//
// A tool is added, removed, unchanged, or modified with the parts that
// changed. Which parts can be named depends on the baseline: a crawlcheck
// lockfile with per-part hashes names description, inputSchema and
// annotations; one without them (a legacy lock) can only say the tool
// changed; an agentgate.lock names description and inputSchema and cannot
// see annotations at all, which the result states in BlindParts rather than
// passing silently.
//
// For a changed description whose old text the baseline kept, the moved text
// is given as a word diff (worddiff.go); between two full tool lists, a
// changed input schema is given as the JSON Pointer paths that changed
// (paths.go).
package diff

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/classify"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// Change is one modified tool.
type Change struct {
	Name string
	// Parts that changed, in the order description, inputSchema,
	// annotations. Empty when Unknown.
	Parts []string
	// Unknown: the tool hash differs and the baseline cannot say which part.
	Unknown         bool
	DescriptionDiff []Segment // nil unless the description changed and the old text is known
	SchemaPaths     []PathChange
	SchemaPathsCut  bool // more paths changed than are listed
	ObservedSHA256  string
	// Classes says what the change introduces (core/internal/classify):
	// of the description's words when it changed (all of the new text when
	// the baseline kept no old one), capability when the input schema or
	// the annotations changed. Nil when Unknown.
	Classes *classify.Result
	// DescriptionClasses is the classes of the description's change alone
	// (what a description_changed observation carries), nil when the
	// description did not change or Unknown.
	DescriptionClasses *classify.Result
}

// Result is the comparison of a whole list.
type Result struct {
	Added      []string // observed, not in the baseline (observed order sorted by name)
	Removed    []string // in the baseline, not observed
	Modified   []Change
	Unchanged  []string
	BlindParts []string
}

// Same reports whether nothing was added, removed or modified.
func (r Result) Same() bool { return len(r.Added)+len(r.Removed)+len(r.Modified) == 0 }

// Against compares observed tools with a baseline.
func Against(base lock.Baseline, observed []tools.Tool) Result {
	r := Result{BlindParts: base.BlindParts}
	obs := make(map[string]*tools.Tool, len(observed))
	sorted := make([]*tools.Tool, len(observed))
	for i := range observed {
		obs[observed[i].Name] = &observed[i]
		sorted[i] = &observed[i]
	}
	tools.SortEntries(sorted, func(t *tools.Tool) string { return t.Name })
	for _, bt := range base.Tools {
		if _, ok := obs[bt.Name]; !ok {
			r.Removed = append(r.Removed, bt.Name)
		}
	}
	byName := make(map[string]*lock.BaselineTool, len(base.Tools))
	for i := range base.Tools {
		byName[base.Tools[i].Name] = &base.Tools[i]
	}
	budget := checkCells
	var classes *classify.Classifier // built on the first modified tool: most checks have none
	names := func() *classify.Classifier {
		if classes == nil {
			ns := make([]string, len(observed))
			for i := range observed {
				ns[i] = observed[i].Name
			}
			classes = classify.New(ns)
		}
		return classes
	}
	for _, t := range sorted {
		bt, ok := byName[t.Name]
		if !ok {
			r.Added = append(r.Added, t.Name)
			continue
		}
		c, changed := compareTool(bt, t)
		if !changed {
			r.Unchanged = append(r.Unchanged, t.Name)
			continue
		}
		if old, ok := base.Descriptions[t.Name]; ok && hasPart(c.Parts, tools.PartDescription) {
			c.DescriptionDiff = words(old, t.Description, &budget)
		}
		c.DescriptionClasses, c.Classes = classesOf(&c, t, names())
		r.Modified = append(r.Modified, c)
	}
	return r
}

// classesOf classifies a modified tool's change: the description's alone,
// and with capability for a schema or annotations change; nil when the
// baseline cannot say which part changed.
func classesOf(c *Change, t *tools.Tool, k *classify.Classifier) (desc, all *classify.Result) {
	if c.Unknown {
		return nil, nil
	}
	var r classify.Result
	switch {
	case c.DescriptionDiff != nil:
		r = k.Change(Classify(c.DescriptionDiff), t.Name)
		desc = &r
	case hasPart(c.Parts, tools.PartDescription):
		r = k.Whole(t.Description, t.Name)
		desc = &r
	}
	for _, p := range []string{tools.PartInputSchema, tools.PartAnnotations} {
		if hasPart(c.Parts, p) {
			r = r.With(classify.Capability, p)
		}
	}
	return desc, &r
}

// Classify turns a word diff into the classifier's segments.
func Classify(segs []Segment) []classify.Segment {
	out := make([]classify.Segment, len(segs))
	for i, s := range segs {
		out[i] = classify.Segment{Op: s.Op, Text: s.Text}
	}
	return out
}

func compareTool(bt *lock.BaselineTool, t *tools.Tool) (Change, bool) {
	c := Change{Name: t.Name, ObservedSHA256: t.SHA256}
	switch {
	case bt.Agentgate != nil:
		ag := t.Agentgate()
		if ag.DescriptionHash != bt.Agentgate.DescriptionHash {
			c.Parts = append(c.Parts, tools.PartDescription)
		}
		if ag.InputSchemaHash != bt.Agentgate.InputSchemaHash {
			c.Parts = append(c.Parts, tools.PartInputSchema)
		}
		return c, len(c.Parts) > 0
	case bt.SHA256 == t.SHA256:
		return c, false
	case bt.Parts == nil:
		c.Unknown = true
		return c, true
	}
	observed := t.Parts()
	for _, p := range []string{tools.PartDescription, tools.PartInputSchema, tools.PartAnnotations} {
		if bt.Parts.Get(p) != observed.Get(p) {
			c.Parts = append(c.Parts, p)
		}
	}
	// Parts that all match while the tool hash differs cannot happen for an
	// honest lockfile; say the tool changed rather than pass it.
	c.Unknown = len(c.Parts) == 0
	return c, true
}

func hasPart(parts []string, p string) bool {
	for _, x := range parts {
		if x == p {
			return true
		}
	}
	return false
}

// Lists compares two full tool lists: everything Against says, and for a
// changed input schema the paths that changed.
func Lists(old, new []tools.Tool) Result {
	base := lock.Baseline{Format: "tools", Descriptions: map[string]string{}}
	byName := make(map[string]*tools.Tool, len(old))
	for i := range old {
		t := &old[i]
		byName[t.Name] = t
		parts := t.Parts()
		base.Tools = append(base.Tools, lock.BaselineTool{Name: t.Name, SHA256: t.SHA256, Parts: &parts})
		if t.HasDescription {
			base.Descriptions[t.Name] = t.Description
		}
	}
	tools.SortEntries(base.Tools, func(b lock.BaselineTool) string { return b.Name })
	r := Against(base, new)
	newByName := make(map[string]*tools.Tool, len(new))
	for i := range new {
		newByName[new[i].Name] = &new[i]
	}
	for i := range r.Modified {
		c := &r.Modified[i]
		if hasPart(c.Parts, tools.PartInputSchema) {
			c.SchemaPaths, c.SchemaPathsCut = Paths(byName[c.Name].InputSchema, newByName[c.Name].InputSchema)
		}
	}
	return r
}

// Value renders a result as JSON.
func (r Result) Value() canon.Value {
	mods := make([]canon.Value, len(r.Modified))
	for i, c := range r.Modified {
		mods[i] = c.Value()
	}
	return canon.Obj(
		canon.M("added", canon.Strs(nonNil(r.Added))),
		canon.M("removed", canon.Strs(nonNil(r.Removed))),
		canon.M("modified", canon.Arr(mods...)),
		canon.M("unchanged", canon.Int(int64(len(r.Unchanged)))),
		canon.M("blind_parts", canon.Strs(nonNil(r.BlindParts))),
	)
}

// Value renders one change as JSON.
func (c Change) Value() canon.Value {
	ms := []canon.Member{
		canon.M("name", canon.Str(c.Name)),
		canon.M("parts", canon.Strs(nonNil(c.Parts))),
		canon.M("tool_changed", canon.BoolOf(c.Unknown)),
	}
	if c.DescriptionDiff != nil {
		ms = append(ms, canon.M("description_diff", SegmentsValue(c.DescriptionDiff)))
	}
	if c.SchemaPaths != nil {
		ms = append(ms, canon.M("schema_paths", PathsValue(c.SchemaPaths)), canon.M("schema_paths_truncated", canon.BoolOf(c.SchemaPathsCut)))
	}
	if c.Classes != nil {
		ms = append(ms, c.Classes.Value()...)
	}
	return canon.Obj(ms...)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
