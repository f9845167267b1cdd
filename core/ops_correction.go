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
	// The corrections by target, each verified once and answered as
	// served, with its trust beside it.
	byTarget := map[string][]canon.Value{}
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
		byTarget[t] = append(byTarget[t], canon.Obj(append(d.Without("signature").Members(),
			canon.M("trust", canon.Str(v.Trust)), canon.M("trust_reason", canon.StrOrNull(v.Reason, v.Reason != "")))...))
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
