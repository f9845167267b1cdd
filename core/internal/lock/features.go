package lock

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// Features is the additive extension of crawlcheck-mcp-lock v1 that pins
// what a server offers beside its tools (docs/hashing.md, "features"): per
// prompt, resource and resource template the hash of each member
// (features.Kind.Parts), and per ui:// UI template a tool names the hashes
// of its contents and _meta. It sits in the signed part of the lockfile
// after coverage; no tool hash, tools_sha256, parts or coverage changes. A
// list the lockfile does not hold was not recorded (the lockfile was made
// by a host that did not read it), and is not compared: the record says
// so. A list recorded empty is approved as empty: one offered later is
// added.
type Features struct {
	// Lists holds each recorded list by its name (features.Kind.Name): the
	// items by key.
	Lists map[string]map[string]features.Hashes
	// UI holds the UI templates by ui:// URI; nil when not recorded.
	UI map[string]features.Hashes
}

// FeaturesMember is the lockfile's member name of the extension.
const FeaturesMember = "features"

// uiTemplatesMember is the member of the UI templates in the extension.
const uiTemplatesMember = "ui_templates"

// NewFeatures pins the lists read (by list name: the items of each) and
// the UI templates read (by URI; nil: none were read).
func NewFeatures(lists map[string][]features.Item, ui map[string]features.Hashes) *Features {
	f := &Features{Lists: map[string]map[string]features.Hashes{}, UI: ui}
	for name, items := range lists {
		m := make(map[string]features.Hashes, len(items))
		for _, it := range items {
			m[it.Key] = it.Parts
		}
		f.Lists[name] = m
	}
	return f
}

// Value renders the extension in canonical member order.
func (f *Features) Value() canon.Value {
	var ms []canon.Member
	for _, k := range featureOrder() {
		items, ok := f.Lists[k.Name]
		if !ok {
			continue
		}
		is := make([]canon.Member, 0, len(items))
		for _, key := range features.Keys(items) {
			is = append(is, canon.M(key, items[key].Value(k)))
		}
		ms = append(ms, canon.M(k.Name, canon.Obj(is...)))
	}
	if f.UI != nil {
		us := make([]canon.Member, 0, len(f.UI))
		for _, uri := range features.Keys(f.UI) {
			us = append(us, canon.M(uri, f.UI[uri].UIValue()))
		}
		ms = append(ms, canon.M(uiTemplatesMember, canon.Obj(us...)))
	}
	return canon.Obj(ms...)
}

// featureOrder is the lists in the canonical order of their names:
// prompts, resource_templates, resources.
func featureOrder() []features.Kind {
	return []features.Kind{features.Prompts, features.Templates, features.Resources}
}

// parseFeatures reads the extension.
func parseFeatures(v canon.Value) (*Features, error) {
	bad := func(format string, args ...any) (*Features, error) {
		return nil, cerr.New(cerr.LockInvalid, "crawlcheck lockfile: features"+format, args...)
	}
	if v.Kind() != canon.Object {
		return bad(" must be an object")
	}
	f := &Features{Lists: map[string]map[string]features.Hashes{}}
	for _, m := range v.Members() {
		if m.Value.Kind() != canon.Object {
			return bad(".%s must be an object", m.Key)
		}
		if m.Key == uiTemplatesMember {
			f.UI = map[string]features.Hashes{}
			for _, u := range m.Value.Members() {
				h, ok := parseHashes(u.Value, features.UIParts)
				if !ok {
					return bad(".ui_templates[%q] must hold exactly %v, each 64 lowercase hex", u.Key, features.UIParts)
				}
				f.UI[u.Key] = h
			}
			continue
		}
		k, ok := features.KindOf(m.Key)
		if !ok || k.Name != m.Key {
			return bad(": unknown member %q", m.Key)
		}
		items := map[string]features.Hashes{}
		for _, it := range m.Value.Members() {
			h, ok := parseHashes(it.Value, k.Parts)
			if !ok {
				return bad(".%s[%q] must hold exactly %v, each 64 lowercase hex", m.Key, it.Key, k.Parts)
			}
			items[it.Key] = h
		}
		f.Lists[k.Name] = items
	}
	return f, nil
}

func parseHashes(v canon.Value, parts []string) (features.Hashes, bool) {
	if v.Kind() != canon.Object || len(v.Members()) != len(parts) {
		return nil, false
	}
	h := features.Hashes{}
	for _, p := range parts {
		x, _ := v.Get(p)
		s, ok := x.Str()
		if !ok || !tools.IsHexHash(s) {
			return nil, false
		}
		h[p] = s
	}
	return h, true
}
