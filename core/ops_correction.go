package core

import (
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/guard"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// Corrections (docs/issuer.md, "Corrections"): an issuer never changes a
// record or receipt it holds; it publishes a signed, versioned correction
// naming it by digest, and appends it to its log. A correction that changes
// a rule or a default names the rule table (rules_sha256) or policy version
// that now applies. The core writes and signs the document
// (sign_correction) and says which of a record log's records a set of
// corrections names (corrections_apply).

// correctionKind is a correction's kind, its signature's domain.
const correctionKind = "crawlcheck-correction"

// maxCorrectionText bounds a correction's reason and reporter.
const maxCorrectionText = 4096

func opSignCorrection(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	priv, kid := signingKey(rd)
	issuer := rd.Str("issuer", true)
	issued := rd.Time("issued_at")
	target := rd.Str("target", true)
	version := rd.Value("version")
	supersedes := rd.Str("supersedes", false)
	reason := rd.Str("reason", true)
	reporter := rd.Str("reporter", true)
	rules := rd.Str("rules_sha256", false)
	policy := rd.Str("policy_version", false)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	n, _ := version.NumberText()
	switch {
	case !tools.IsHexHash(target):
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.target must be a record_sha256 or a receipt's sha256 (64 lowercase hex digits)")
	case n == "" || n == "0" || strings.ContainsAny(n, ".-eE") || len(n) > 9:
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.version must be a whole number from 1")
	case (n == "1") != (supersedes == ""):
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.supersedes names the correction before this one: required from version 2 on, absent for version 1")
	case supersedes != "" && !tools.IsHexHash(supersedes), rules != "" && !tools.IsHexHash(rules):
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.supersedes and request.rules_sha256 must be SHA-256 digests (64 lowercase hex digits)")
	case len(reason) > maxCorrectionText || len(reporter) > maxCorrectionText || len(policy) > maxCorrectionText:
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.reason, reporter and policy_version are at most %d bytes each", maxCorrectionText)
	}
	doc := guard.Seal(canon.Obj(
		canon.M("kind", canon.Str(correctionKind)),
		canon.M("v", canon.Int(1)),
		canon.M("issuer", canon.Str(issuer)),
		canon.M("issued_at", canon.Str(timefmt.Format(issued))),
		canon.M("target", canon.Str(target)),
		canon.M("version", version),
		canon.M("supersedes", canon.StrOrNull(supersedes, supersedes != "")),
		canon.M("reason", canon.Str(reason)),
		canon.M("reporter", canon.Str(reporter)),
		canon.M("rules_sha256", canon.StrOrNull(rules, rules != "")),
		canon.M("policy_version", canon.StrOrNull(policy, policy != "")),
	), priv, kid)
	sum, _ := doc.Get("sha256")
	return canon.Obj(canon.M("correction", doc), canon.M("sha256", sum), canon.M("key_id", canon.Str(kid))), nil
}

// Re-signing (docs/issuer.md, "Corrections through a rotation"): a retired
// key verifies nothing, so a correction signed before a rotation would stop
// applying once its key is retired. The issuer re-signs it with the key that
// signs now: the same correction (every member as first signed) with
// resigns, the sha256 of its first signing, and resigned_at. A re-signing
// is a new signed document with a new sha256, so resigns always names the
// first signing (a re-signing of a re-signing keeps it): that digest is the
// correction's identity, what a later version's supersedes names, and it
// never changes. corrections_apply answers each correction once, by that
// identity, from the signings served.

// correctionIdentity are the members a re-signing adds; without them and
// the seal (key_id, sha256, signature), every signing of one correction is
// the same document.
var correctionIdentity = []string{"resigns", "resigned_at"}

// correctionContent is what every signing of one correction holds alike.
func correctionContent(d canon.Value) canon.Value {
	return d.Without(append([]string{"key_id", "sha256", "signature"}, correctionIdentity...)...)
}

// correctionOriginal is the sha256 of a correction's first signing: its own
// sha256, or the one it re-signs.
func correctionOriginal(d canon.Value) string {
	if v, ok := d.Get("resigns"); ok {
		if s, ok := v.Str(); ok {
			return s
		}
	}
	v, _ := d.Get("sha256")
	s, _ := v.Str()
	return s
}

func opResignCorrection(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	priv, kid := signingKey(rd)
	at := rd.Time("resigned_at")
	d := rd.RequiredDoc("correction")
	dir := logDirectory(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	kind, _ := d.Get("kind")
	stored, _ := d.Get("sha256")
	signature, _ := d.Get("signature")
	if k, _ := kind.Str(); d.Kind() != canon.Object || k != correctionKind {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.correction is not a %s", correctionKind)
	}
	sum, _ := stored.Str()
	sg, _ := signature.Str()
	// Only what the issuer signed is re-signed, and as it is: a re-signing
	// vouches anew for a correction, never for an edit of one.
	if v := sig.Verify(correctionKind, sum, sig.Digest(d), sg, sig.Keys{Directory: dir}, at); v.Trust != sig.Verified {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.correction does not verify under request.key_directory (%s): only a correction the issuer signed, as it signed it, is re-signed", v.Reason)
	}
	original := correctionOriginal(d)
	if !tools.IsHexHash(original) {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.correction.resigns must be a SHA-256 digest (64 lowercase hex digits)")
	}
	doc := guard.Seal(canon.Obj(append(correctionContent(d).Members(),
		canon.M("resigns", canon.Str(original)),
		canon.M("resigned_at", canon.Str(timefmt.Format(at))),
	)...), priv, kid)
	out, _ := doc.Get("sha256")
	return canon.Obj(canon.M("correction", doc), canon.M("sha256", out), canon.M("key_id", canon.Str(kid)),
		canon.M("resigns", canon.Str(original))), nil
}

// ReasonResigningDiffers is a re-signing's trust_reason when it is not the
// correction it names (its first signing, served beside it and intact,
// holds other members): a key of the issuer signed two texts as one
// correction, and neither is taken for the other.
const ReasonResigningDiffers = "resigning_differs"

// pickSigning answers, of one correction's signings as served, the one
// corrections_apply shows: the newest the directory vouches for (a
// re-signing after its first signing, later re-signings after earlier
// ones), else the newest signing, whose trust says why it does not apply
// (a re-signing that differs from its first signing says so, rather than
// hiding behind the first's retired key).
func pickSigning(ss []signing) signing {
	best, newest := -1, 0
	for i, s := range ss {
		if s.trust.Trust == sig.Verified && (best < 0 || s.at > ss[best].at) {
			best = i
		}
		if s.at > ss[newest].at {
			newest = i
		}
	}
	if best >= 0 {
		return ss[best]
	}
	return ss[newest]
}

// signing is one signed copy of a correction, verified.
type signing struct {
	doc   canon.Value
	trust sig.Result
	at    string // resigned_at; "" for the first signing
}

// recordTargets are the digests a record can be corrected by: its own
// record_sha256 and the sha256 of the issuer's receipt it relied on.
func recordTargets(rec canon.Value) (record, receipt string) {
	v, _ := rec.Get("record_sha256")
	record, _ = v.Str()
	if iss, ok := rec.Get("issuer"); ok {
		if rc, ok := iss.Get("receipt"); ok {
			v, _ := rc.Get("sha256")
			receipt, _ = v.Str()
		}
	}
	return record, receipt
}

func opCorrectionsApply(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	lines := rd.Str("records", true)
	var docs []canon.Value
	if rd.Has("corrections") {
		if v := rd.Value("corrections"); v.Kind() != canon.Array {
			rd.Fail(cerr.New(cerr.BadRequest, "%s must be an array of corrections", rd.Field("corrections")))
		} else {
			docs = v.Elems()
		}
	}
	var dir *sig.Directory
	var now time.Time
	if len(docs) > 0 {
		now = rd.Time("now")
		dir = logDirectory(rd)
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	// The corrections by target, each verified once; each correction is
	// answered once (pickSigning) of the signings served for it (its first
	// and the issuer's re-signings, grouped by the first's sha256), as
	// served, with its trust beside it.
	type group struct {
		target   string
		signings []signing
	}
	groups := map[string]*group{}
	var order []string
	for i, d := range docs {
		if text, ok := d.Str(); ok {
			p, err := canon.ParseString(text)
			if err != nil {
				return canon.Value{}, cerr.In("request.corrections["+canon.Int(int64(i)).String()+"]", err)
			}
			d = p
		}
		kind, _ := d.Get("kind")
		target, _ := d.Get("target")
		stored, _ := d.Get("sha256")
		signature, _ := d.Get("signature")
		t, ok := target.Str()
		if k, _ := kind.Str(); d.Kind() != canon.Object || k != correctionKind || !ok {
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.corrections[%d] is not a %s", i, correctionKind)
		}
		sum, _ := stored.Str()
		sg, _ := signature.Str()
		v := sig.Verify(correctionKind, sum, sig.Digest(d.Without("sha256", "signature")), sg, sig.Keys{Directory: dir}, now)
		at := ""
		if d.Has("resigns") {
			ra, _ := d.Get("resigned_at")
			if at, _ = ra.Str(); at == "" {
				at = " " // a re-signing, whatever its time says
			}
		}
		o := correctionOriginal(d)
		key := t + " " + o
		g, ok := groups[key]
		if !ok {
			g = &group{target: t}
			groups[key] = g
			order = append(order, key)
		}
		g.signings = append(g.signings, signing{doc: d, trust: v, at: at})
	}
	byTarget := map[string][]canon.Value{}
	for _, key := range order {
		g := groups[key]
		// The first signing, when served intact (its sha256 its content's),
		// is what each re-signing must copy, whether or not its key still
		// verifies.
		var first *canon.Value
		for _, s := range g.signings {
			if sum, _ := s.doc.Get("sha256"); s.at == "" {
				if ss, _ := sum.Str(); ss == sig.Digest(s.doc) {
					first = &s.doc
					break
				}
			}
		}
		for i, s := range g.signings {
			if first != nil && s.at != "" && !canon.Equal(correctionContent(s.doc), correctionContent(*first)) {
				g.signings[i].trust = sig.Result{Trust: sig.Untrusted, Reason: ReasonResigningDiffers}
			}
		}
		p := pickSigning(g.signings)
		byTarget[g.target] = append(byTarget[g.target], canon.Obj(append(p.doc.Without("signature").Members(),
			canon.M("trust", canon.Str(p.trust.Trust)), canon.M("trust_reason", canon.StrOrNull(p.trust.Reason, p.trust.Reason != "")))...))
	}
	var targets, applies []canon.Value
	seen := map[string]bool{}
	n := 0
	for rest, more := strings.TrimSuffix(lines, "\n"), lines != ""; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		n++
		rec, err := canon.ParseString(line)
		if err != nil {
			continue // not a record: record verify says why; nothing names it
		}
		record, receipt := recordTargets(rec)
		for _, t := range []struct{ kind, sum string }{{"record", record}, {"receipt", receipt}} {
			if t.sum == "" {
				continue
			}
			if !seen[t.sum] {
				seen[t.sum] = true
				targets = append(targets, canon.Str(t.sum))
			}
			for _, c := range byTarget[t.sum] {
				applies = append(applies, canon.Obj(
					canon.M("line", canon.Int(int64(n))),
					canon.M("record_sha256", canon.StrOrNull(record, record != "")),
					canon.M("target", canon.Str(t.sum)),
					canon.M("target_kind", canon.Str(t.kind)),
					canon.M("correction", c),
				))
			}
		}
	}
	return canon.Obj(canon.M("targets", canon.Arr(targets...)), canon.M("applies", canon.Arr(applies...))), nil
}
