package continuity

import (
	"slices"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
)

// ObservedFeatures is what the host read of a server beside its tools:
// each list (prompts, resources, resource templates) it read or knows the
// server does not offer, and the ui:// templates the tools name
// (docs/continuity.md, observed.features). A list absent from Lists was
// not read, and is not compared.
type ObservedFeatures struct {
	Lists map[string]ObservedList // by features.Kind.Name
	// UI holds each ui:// template read, by URI; nil when the host read
	// none (it handed no ui_templates).
	UI map[string]ObservedUI
}

// ObservedList is one list as the host read it.
type ObservedList struct {
	// Undeclared: the server's capabilities do not declare the list, so
	// the host did not ask for it (MCP forbids the request): it offers
	// none.
	Undeclared     bool
	Pages          []string
	PageCapReached bool
	// Failure is a host fault (HostFailures) that ended the walk before it
	// was whole; the pages before it are not compared.
	Failure string
}

// ObservedUI is one ui:// template read with resources/read: its answer as
// the server sent it, or the host fault that kept it from being read.
type ObservedUI struct {
	Result  string
	Failure string
}

// What a record's blind_parts names of the features extension: each list
// and the UI templates, when the baseline recorded none (or set them aside)
// or the host did not read them.
const BlindUITemplates = "ui_templates"

// featureObservations names the observations of each list: added,
// removed, changed.
var featureObservations = map[string][3]policy.Observation{
	features.Prompts.Name:   {policy.PromptAdded, policy.PromptRemoved, policy.PromptChanged},
	features.Resources.Name: {policy.ResourceAdded, policy.ResourceRemoved, policy.ResourceChanged},
	features.Templates.Name: {policy.ResourceTemplateAdded, policy.ResourceTemplateRemoved, policy.ResourceTemplateChanged},
}

// comparedList is one list the check compared: the items the server
// offers (all of them for a whole list), for their effects on the record.
type comparedList struct {
	kind  features.Kind
	items []features.Item
}

// FeaturesUsable reports whether the features extension may be compared
// against: present, and not added after signing.
func (t Trust) FeaturesUsable() bool { return t.Features == "signed" || t.Features == "unsigned" }

// compareFeatures compares the lists and UI templates the baseline's
// features extension pins with what the host read. A list either side does
// not hold is not compared, and the record names it in blind_parts.
func (c *check) compareFeatures() {
	var base *lock.Features
	if l := c.in.Lock.Crawlcheck; l != nil && c.trust.FeaturesUsable() {
		base = l.Features
	}
	obs := c.in.Observed.Features
	for _, k := range features.Kinds {
		approved, inBase := map[string]features.Hashes(nil), false
		if base != nil {
			approved, inBase = base.Lists[k.Name]
		}
		ol, read := obs.Lists[k.Name]
		if !inBase || !read || c.in.Observed.Failure != "" {
			c.blind = append(c.blind, k.Name)
			continue
		}
		c.compareList(k, approved, ol)
	}
	if base == nil || base.UI == nil || obs.UI == nil || !c.listRead {
		c.blind = append(c.blind, BlindUITemplates)
		return
	}
	c.compareUI(base.UI, obs.UI)
}

func (c *check) compareList(k features.Kind, approved map[string]features.Hashes, ol ObservedList) {
	incomplete := func(ms ...canon.Member) {
		// Not a difference, but not "unchanged" either: part of what the
		// lockfile pins was not compared.
		c.changed = true
		c.add(policy.FeaturesIncomplete, "", "", "", canon.Obj(append([]canon.Member{canon.M("list", canon.Str(k.Method))}, ms...)...))
	}
	var l features.List
	switch {
	case ol.Failure != "":
		incomplete(canon.M("reason", canon.Str("failure")), canon.M("failure", canon.Str(ol.Failure)))
		return
	case !ol.Undeclared:
		var err error
		if l, err = features.FromPages(k, ol.Pages, ol.PageCapReached); err != nil {
			incomplete(canon.M("reason", canon.Str("malformed")),
				canon.M("code", canon.Str(string(cerr.CodeOf(err)))), canon.M("error", canon.Str(cerr.Message(err))))
			return
		}
	}
	if l.Truncated != "" {
		incomplete(canon.M("reason", canon.Str(l.Truncated)), canon.M("pages_read", canon.Int(int64(l.Pages))))
	}
	obsn := featureObservations[k.Name]
	offered := map[string]bool{}
	for _, it := range l.Items {
		offered[it.Key] = true
		was, ok := approved[it.Key]
		if !ok {
			c.changed = true
			c.addItem(obsn[0], it.Key, "", it.SHA256)
			continue
		}
		for _, p := range k.Parts {
			if it.Parts[p] != was[p] {
				c.changed = true
				c.addItem(obsn[2], it.Key, p, it.SHA256)
			}
		}
	}
	if l.Truncated == "" {
		for _, key := range features.Keys(approved) {
			if !offered[key] {
				c.changed = true
				c.addItem(obsn[1], key, "", "")
			}
		}
	}
	c.features = append(c.features, comparedList{kind: k, items: l.Items})
}

func (c *check) addItem(o policy.Observation, item, part, sha string) {
	c.findings = append(c.findings, policy.Finding{Observation: o, Item: item, Part: part, ToolSHA256: sha, Detail: canon.NullValue()})
}

// compareUI compares the ui:// template of each offered tool the baseline
// approved with the one pinned. A template that could not be read, or that
// the baseline did not pin, withholds the tool like a changed one: what the
// host would render was not compared.
func (c *check) compareUI(approved map[string]features.Hashes, read map[string]ObservedUI) {
	for i := range c.observed.Tools {
		t := &c.observed.Tools[i]
		// The URI first: most tools name no template, and Lookup is a scan
		// of the baseline's tools (a 1,000-tool check spent a million
		// name comparisons here).
		uri := features.UIResourceURI(t)
		if uri == "" {
			continue
		}
		if _, ok := c.base.Lookup(t.Name); !ok {
			continue
		}
		fail := func(reason string, ms ...canon.Member) {
			c.changed = true
			c.add(policy.UITemplateChanged, t.Name, "", t.SHA256, canon.Obj(append([]canon.Member{
				canon.M("uri", canon.Str(uri)), canon.M("reason", canon.Str(reason))}, ms...)...))
		}
		was, pinned := approved[uri]
		got, ok := read[uri]
		switch {
		case !pinned:
			fail("not_approved")
			continue
		case !ok:
			fail("not_read")
			continue
		case got.Failure != "":
			fail("failure", canon.M("failure", canon.Str(got.Failure)))
			continue
		}
		h, err := features.ReadUITemplate(got.Result)
		if err != nil {
			fail("malformed", canon.M("code", canon.Str(string(cerr.CodeOf(err)))), canon.M("error", canon.Str(cerr.Message(err))))
			continue
		}
		for _, p := range features.UIParts {
			if h[p] != was[p] {
				c.changed = true
				c.add(policy.UITemplateChanged, t.Name, p, t.SHA256, canon.Obj(canon.M("uri", canon.Str(uri))))
			}
		}
	}
}

// featuresValue is the record's features member: for each list compared,
// each offered item's effect — the strongest of its own observations and,
// when the session is paused or denied, the session's — as tools has it
// for tools. eff picks the effect (enforce's for would). Null when no list
// was compared, so a record of a check without features keeps its shape.
func (c *check) featuresValue(d policy.Decision, eff func(policy.Decided) policy.Effect, session policy.Effect) canon.Value {
	if len(c.features) == 0 {
		return canon.NullValue()
	}
	ms := make([]canon.Member, 0, len(c.features))
	for _, k := range featureOrder() {
		for _, cl := range c.features {
			if cl.kind.Name != k {
				continue
			}
			obsn := featureObservations[k]
			effects := map[string]policy.Effect{}
			for _, it := range cl.items {
				effects[it.Key] = policy.Proceed
				if session >= policy.Pause {
					effects[it.Key] = session
				}
			}
			for _, f := range d.Findings {
				if e, ok := effects[f.Item]; ok && (f.Observation == obsn[0] || f.Observation == obsn[2]) {
					effects[f.Item] = max(e, eff(f))
				}
			}
			is := make([]canon.Member, 0, len(effects))
			for _, key := range features.Keys(effects) {
				is = append(is, canon.M(key, canon.Str(effects[key].String())))
			}
			ms = append(ms, canon.M(k, canon.Obj(is...)))
		}
	}
	return canon.Obj(ms...)
}

// featureOrder is the list names in canonical (record) order.
func featureOrder() []string {
	return []string{features.Prompts.Name, features.Templates.Name, features.Resources.Name}
}

// handedFeatures is the handoff's features: for each list compared, the
// items a host may hand over — those whose effect does not block, while
// the session proceeds — each written by the core from what it parsed
// (the members pinned one by one; never an unknown member, which some
// loose decoder would read as a member the approval did not show, nor a
// resource's unpinned size), and the keys of those withheld. Null when no
// list was compared: a host then hands none over.
func (c *check) handedFeatures(session string, d policy.Decision, texts bool) canon.Value {
	effects := c.featuresValue(d, func(x policy.Decided) policy.Effect { return x.Effect }, d.Effect)
	if effects.IsNull() {
		return canon.NullValue()
	}
	ms := make([]canon.Member, 0, len(c.features))
	for _, k := range featureOrder() {
		for _, cl := range c.features {
			if cl.kind.Name != k {
				continue
			}
			le, _ := effects.Get(k)
			handed, withheld := []canon.Value{}, []string{}
			for _, it := range cl.items {
				ev, _ := le.Get(it.Key)
				name, _ := ev.Str()
				e, _ := policy.ParseEffect(name)
				if session != SessionProceed || e.Blocks() {
					withheld = append(withheld, it.Key)
					continue
				}
				// Without texts the key stays: what may be reached is the
				// handoff's decision, as the tools' calls.names are, and
				// the session engine judges an item call by it; only the
				// object (the bulk of the answer) is not written.
				item := canon.NullValue()
				if texts {
					item = canon.Str(string(canon.Canonical(handedItem(cl.kind, it))))
				}
				handed = append(handed, canon.Obj(
					canon.M("key", canon.Str(it.Key)),
					canon.M("item", item),
				))
			}
			ms = append(ms, canon.M(k, canon.Obj(
				canon.M("items", canon.Arr(handed...)),
				canon.M("withheld", canon.Strs(sortedKeys(withheld))),
			)))
		}
	}
	return canon.Obj(ms...)
}

// handedItem is the object of an item a host hands over: its members the
// lockfile pins one by one, as received.
func handedItem(k features.Kind, it features.Item) canon.Value {
	var ms []canon.Member
	for _, m := range it.Raw.Members() {
		if m.Key != features.MemberUnknown && slices.Contains(k.Parts, m.Key) {
			ms = append(ms, m)
		}
	}
	return canon.Obj(ms...)
}

func sortedKeys(keys []string) []string {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return features.Keys(m)
}

// ItemObservations are the observations of one list's items (added,
// removed, changed), by the list's record name; nil for another name. A
// refusal of an item names those of its own list only: a prompt and a
// resource may share a key.
func ItemObservations(list string) []policy.Observation {
	o, ok := featureObservations[list]
	if !ok {
		return nil
	}
	return o[:]
}
