package policy

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/classify"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// PolicyKind is the kind of a policy document (docs/policy.md).
const PolicyKind = "crawlcheck-policy"

// DefaultVersion is the version of the default policy.
const DefaultVersion = "crawlcheck-default-3"

// DefaultMaxAgeDays is the default maximum baseline age.
const DefaultMaxAgeDays = 90

// Sources of a policy.
const (
	SourceDefault  = "default"
	SourceOperator = "operator"
)

// Exception is an approved exception: a person accepted one observation on
// one tool at one observed hash, until a time.
type Exception struct {
	Observation Observation
	Tool        string // "" for a session-scope observation
	SHA256      string // the observed tool hash it was approved for; "" for session scope
	ApprovedBy  string
	Until       time.Time
	Reason      string
}

// Value renders the exception as JSON.
func (e Exception) Value() canon.Value {
	return canon.Obj(
		canon.M("observation", canon.Str(string(e.Observation))),
		canon.M("tool", canon.Str(e.Tool)),
		canon.M("sha256", canon.Str(e.SHA256)),
		canon.M("approved_by", canon.Str(e.ApprovedBy)),
		canon.M("until", canon.Str(timefmt.Format(e.Until))),
		canon.M("reason", canon.Str(e.Reason)),
	)
}

// Policy is the operator's policy, defaults filled in.
type Policy struct {
	Version                string
	MaxBaselineAge         time.Duration
	Effects                map[Observation]Effect
	AllowIntegrityOverride bool
	RequireSignedBaseline  *bool // nil: required exactly when operator keys are given
	// RequireObservedBaseline (require_observed_baseline, opt-in, absent
	// from the default document) refuses a baseline whose signed
	// provenance is not "observed" (docs/issuer.md, Trust model).
	RequireObservedBaseline bool
	Exceptions              []Exception
	// ClassEffects gives a changed text of a class its own effect, by
	// observation (description_changed, title_changed,
	// instructions_changed), then class (core/internal/classify): opt-in,
	// absent from the default policy (issue 38, docs/policy.md).
	ClassEffects map[Observation]map[string]Effect
	Source       string
	SHA256       string
}

// Default is the policy in force when the operator gives none.
func Default() *Policy {
	p, err := parse(DefaultDocument(), SourceDefault)
	if err != nil {
		panic("the default policy does not parse: " + err.Error())
	}
	return p
}

// DefaultDocument is the default policy as a document: every effect of the
// table written out, so its sha256 pins the defaults too.
func DefaultDocument() canon.Value {
	effects := make([]canon.Member, len(Rules))
	for i, r := range Rules {
		effects[i] = canon.M(string(r.Observation), canon.Str(r.Default.String()))
	}
	return canon.Obj(
		canon.M("kind", canon.Str(PolicyKind)),
		canon.M("v", canon.Int(1)),
		canon.M("version", canon.Str(DefaultVersion)),
		canon.M("max_baseline_age_days", canon.Int(DefaultMaxAgeDays)),
		canon.M("effects", canon.Obj(effects...)),
	)
}

// Parse reads an operator policy document.
func Parse(doc canon.Value) (*Policy, error) { return parse(doc, SourceOperator) }

func parse(doc canon.Value, source string) (*Policy, error) {
	bad := func(format string, args ...any) (*Policy, error) {
		return nil, cerr.New(cerr.PolicyInvalid, "policy: "+format, args...)
	}
	if doc.Kind() != canon.Object {
		return bad("is %s, not an object", doc.Kind())
	}
	if k, _ := doc.Get("kind"); k.String() != `"`+PolicyKind+`"` {
		return bad("kind is %s, want %q", k, PolicyKind)
	}
	if v, _ := doc.Get("v"); v.String() != "1" {
		return bad("unsupported v %s", v)
	}
	p := &Policy{Effects: map[Observation]Effect{}, Source: source, SHA256: canon.SHA256Hex(doc),
		MaxBaselineAge: DefaultMaxAgeDays * 24 * time.Hour}
	for _, r := range Rules {
		p.Effects[r.Observation] = r.Default
	}
	for _, m := range doc.Members() {
		v := m.Value
		switch m.Key {
		case "kind", "v":
		case "version":
			var ok bool
			if p.Version, ok = v.Str(); !ok || p.Version == "" {
				return bad("version must be a non-empty string")
			}
		case "max_baseline_age_days":
			days, ok := smallInt(v)
			if !ok || days < 1 || days > 36500 {
				return bad("max_baseline_age_days must be an integer from 1 to 36500")
			}
			p.MaxBaselineAge = time.Duration(days) * 24 * time.Hour
		case "effects":
			if v.Kind() != canon.Object {
				return bad("effects must be an object")
			}
			for _, e := range v.Members() {
				if _, ok := RuleOf(Observation(e.Key)); !ok {
					return bad("effects names unknown observation %q", e.Key)
				}
				s, _ := e.Value.Str()
				eff, ok := ParseEffect(s)
				if !ok {
					return bad("effects.%s: unknown effect %s", e.Key, e.Value)
				}
				p.Effects[Observation(e.Key)] = eff
			}
		case "allow_integrity_override":
			var ok bool
			if p.AllowIntegrityOverride, ok = v.BoolValue(); !ok {
				return bad("allow_integrity_override must be a boolean")
			}
		case "require_signed_baseline":
			b, ok := v.BoolValue()
			if !ok {
				return bad("require_signed_baseline must be a boolean")
			}
			p.RequireSignedBaseline = &b
		case "require_observed_baseline":
			var ok bool
			if p.RequireObservedBaseline, ok = v.BoolValue(); !ok {
				return bad("require_observed_baseline must be a boolean")
			}
		case "class_effects":
			ce, err := parseClassEffects(v)
			if err != nil {
				return nil, err
			}
			p.ClassEffects = ce
		case "exceptions":
			if v.Kind() != canon.Array {
				return bad("exceptions must be an array")
			}
			for i, ev := range v.Elems() {
				e, err := parseException(ev)
				if err != nil {
					return bad("exceptions[%d]: %s", i, cerr.Message(err))
				}
				p.Exceptions = append(p.Exceptions, e)
			}
		default:
			return bad("unknown member %q", m.Key)
		}
	}
	if p.Version == "" {
		return bad("version is required")
	}
	if err := p.checkClassEffects(); err != nil {
		return nil, err
	}
	// In table order, so that the message is the same in every build.
	for _, r := range Rules {
		if e := p.Effects[r.Observation]; r.Class == ClassIntegrity && e < Deny && !p.AllowIntegrityOverride {
			return bad("effects.%s lowers an integrity observation to %s; that needs \"allow_integrity_override\": true", r.Observation, e)
		}
	}
	// An exception lowers its observation to proceed_recorded: for an
	// integrity observation that is an override too.
	for i, e := range p.Exceptions {
		if r, _ := RuleOf(e.Observation); r.Class == ClassIntegrity && !p.AllowIntegrityOverride {
			return bad("exceptions[%d] excepts the integrity observation %s; that needs \"allow_integrity_override\": true", i, e.Observation)
		}
	}
	return p, nil
}

func parseException(v canon.Value) (Exception, error) {
	var e Exception
	str := func(k string) (string, bool) { x, _ := v.Get(k); return x.Str() }
	o, ok := str("observation")
	if _, known := RuleOf(Observation(o)); !ok || !known {
		return e, cerr.New(cerr.PolicyInvalid, "observation must name an observation")
	}
	e.Observation = Observation(o)
	for _, f := range []struct {
		name string
		dst  *string
	}{{"tool", &e.Tool}, {"sha256", &e.SHA256}, {"reason", &e.Reason}} {
		if x, ok := v.Get(f.name); ok {
			if *f.dst, ok = x.Str(); !ok {
				return e, cerr.New(cerr.PolicyInvalid, "%s must be a string", f.name)
			}
		}
	}
	switch r, _ := RuleOf(e.Observation); {
	case r.Scope == ScopeTool && (e.Tool == "" || !tools.IsHexHash(e.SHA256)):
		return e, cerr.New(cerr.PolicyInvalid, "an exception for %s names a tool and the observed tool sha256 it was approved for", o)
	case r.Scope == ScopeSession && (e.Tool != "" || e.SHA256 != ""):
		// A session finding has no tool and no hash: such an exception
		// could never apply.
		return e, cerr.New(cerr.PolicyInvalid, "an exception for %s is session-wide: it names no tool and no sha256", o)
	}
	if e.ApprovedBy, ok = str("approved_by"); !ok || e.ApprovedBy == "" {
		return e, cerr.New(cerr.PolicyInvalid, "approved_by is required")
	}
	until, _ := str("until")
	t, err := timefmt.Parse(until)
	if err != nil {
		return e, cerr.New(cerr.PolicyInvalid, "until must be an RFC 3339 time")
	}
	e.Until = t
	for _, m := range v.Members() {
		switch m.Key {
		case "observation", "tool", "sha256", "approved_by", "until", "reason":
		default:
			return e, cerr.New(cerr.PolicyInvalid, "unknown member %q", m.Key)
		}
	}
	return e, nil
}

func smallInt(v canon.Value) (int, bool) {
	s, ok := v.NumberText()
	if !ok || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// ClassObservations are the observations a policy's class_effects may
// name: the changes of a text the classes are read from.
var ClassObservations = []Observation{DescriptionChanged, TitleChanged, InstructionsChanged}

func parseClassEffects(v canon.Value) (map[Observation]map[string]Effect, error) {
	bad := func(format string, args ...any) (map[Observation]map[string]Effect, error) {
		return nil, cerr.New(cerr.PolicyInvalid, "policy: class_effects"+format, args...)
	}
	if v.Kind() != canon.Object {
		return bad(" must be an object")
	}
	out := map[Observation]map[string]Effect{}
	for _, m := range v.Members() {
		o := Observation(m.Key)
		known := false
		for _, c := range ClassObservations {
			known = known || c == o
		}
		if !known {
			return bad(" names %q: only description_changed, title_changed and instructions_changed carry classes", m.Key)
		}
		if m.Value.Kind() != canon.Object {
			return bad(".%s must be an object", m.Key)
		}
		out[o] = map[string]Effect{}
		for _, c := range m.Value.Members() {
			if classify.Rank(c.Key) < 0 || c.Key == classify.Capability {
				return bad(".%s names unknown class %q", m.Key, c.Key)
			}
			s, _ := c.Value.Str()
			e, ok := ParseEffect(s)
			if !ok {
				return bad(".%s.%s: unknown effect %s", m.Key, c.Key, c.Value)
			}
			out[o][c.Key] = e
		}
	}
	return out, nil
}

// checkClassEffects refuses class effects that decrease along the classes'
// order (editorial, documentation, destination, cross_tool, instruction,
// concealment; a class not named has its observation's effect): a change
// takes the effect of its strongest class, so a weaker class can never
// lower what a stronger one in the same change gives.
func (p *Policy) checkClassEffects() error {
	for _, o := range ClassObservations {
		ce := p.ClassEffects[o]
		if ce == nil {
			continue
		}
		prev, prevClass := Proceed, ""
		for _, c := range classify.Names {
			if c == classify.Capability {
				continue
			}
			e := p.classEffect(o, c)
			if e < prev {
				return cerr.New(cerr.PolicyInvalid, "policy: class_effects.%s gives %s %s, below %s for the weaker class %s: a stronger class may not have a weaker effect", o, c, e, prev, prevClass)
			}
			prev, prevClass = e, c
		}
	}
	return nil
}

// classEffect is the effect of a change of class c under observation o:
// the policy's class effect, or the observation's.
func (p *Policy) classEffect(o Observation, c string) Effect {
	if e, ok := p.ClassEffects[o][c]; ok {
		return e
	}
	return p.Effects[o]
}

// classesEffect is the effect a finding's classes give under the policy's
// class effects, and whether they apply: its strongest class's (the
// effects never decrease along the classes, so that is the largest of
// them). A finding whose detail carries no classes (a record of an older
// core, a change whose text was not read) keeps its observation's effect.
func (p *Policy) classesEffect(f Finding) (Effect, bool) {
	if p.ClassEffects[f.Observation] == nil || f.Detail.Kind() != canon.Object {
		return 0, false
	}
	cs, ok := f.Detail.Get("classes")
	if !ok || cs.Kind() != canon.Array || len(cs.Elems()) == 0 {
		return 0, false
	}
	e := Proceed
	for _, c := range cs.Elems() {
		name, _ := c.Str()
		if classify.Rank(name) < 0 {
			return 0, false // a class this core does not know: no opt-in applies
		}
		e = max(e, p.classEffect(f.Observation, name))
	}
	return e, true
}
