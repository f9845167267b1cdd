package core_test

import (
	"encoding/base64"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// logFixture is a transparency log of the test issuer
// ("test-issuer.crawlcheck.invalid/log", its key directory's issuer) whose
// entry 9 is the issuer-signed test lockfile, with a fork of it that
// rewrote entry 2: what a log that showed two clients two histories holds.
type logFixture struct {
	log, fork       *coretest.Log
	lock            obj // the signed lockfile at index lockIndex
	issuer, retired ed25519.PrivateKey
	foreign         ed25519.PrivateKey
	directory       obj
}

const (
	logOrigin = "test-issuer.crawlcheck.invalid/log"
	lockIndex = 9
	logSize   = 16
)

func seedKey(t testing.TB, k testKey) ed25519.PrivateKey {
	seed, err := base64.StdEncoding.DecodeString(k.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func newLogFixture(t testing.TB) *logFixture {
	f := &logFixture{
		log:       &coretest.Log{Origin: logOrigin},
		fork:      &coretest.Log{Origin: logOrigin},
		lock:      signDoc(t, lockDoc(t, baseTools(), approvedAt), loadKey(t, "test-issuer"), true),
		issuer:    seedKey(t, loadKey(t, "test-issuer")),
		retired:   seedKey(t, loadKey(t, "test-issuer-retired")),
		foreign:   seedKey(t, loadKey(t, "test-foreign")),
		directory: keyDirectory(t),
	}
	entry := resultField(t, call(t, "log_entry", obj{"document": f.lock}), "entry")
	for i := range logSize {
		e := `{"kind":"crawlcheck-log-entry","test":` + strconv.Itoa(i) + `}`
		if i == lockIndex {
			e = entry
		}
		f.log.Entries = append(f.log.Entries, []byte(e))
		if i == 2 {
			e = `{"kind":"crawlcheck-log-entry","test":"rewritten"}`
		}
		f.fork.Entries = append(f.fork.Entries, []byte(e))
	}
	return f
}

// proof is the lockfile's tlog-proof against the checkpoint of size.
func (f *logFixture) proof(size int) string { return f.log.Proof(lockIndex, size, f.issuer) }

func (f *logFixture) checkpoint(size int) string { return f.log.Checkpoint(size, f.issuer) }

func (f *logFixture) consistency(m, n int) []string { return coretest.B64(f.log.Consistency(m, n)) }

// logVectors are the log ops' vectors: what verifies, and each way a proof
// or checkpoint can fail (docs/log.md).
func logVectors(t testing.TB) []opVector {
	f := newLogFixture(t)
	var vs []opVector
	add := func(op, name string, request obj) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }

	add("log_entry", "signed lockfile", obj{"document": f.lock})
	add("log_entry", "entry text", obj{"entry": string(f.log.Entries[0])})
	add("log_entry", "unsigned lockfile refused", obj{"document": lockDoc(t, baseTools(), approvedAt)})
	add("log_entry", "document and entry", obj{"document": f.lock, "entry": "x"})

	verify := func(name string, proof string, extra obj) {
		r := obj{"document": f.lock, "proof": proof, "now": checkNow, "key_directory": f.directory}
		for k, v := range extra {
			if r[k] = v; v == nil {
				delete(r, k) // nil: the field left out
			}
		}
		add("log_verify", name, r)
	}
	verify("included", f.proof(12), nil)
	verify("included, consistent with an older kept checkpoint", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency": f.consistency(10, 12)})
	verify("included, the kept checkpoint newer", f.proof(12), obj{"checkpoint": f.checkpoint(16), "consistency": f.consistency(12, 16)})
	verify("included, the kept checkpoint the same", f.proof(12), obj{"checkpoint": f.checkpoint(12)})
	verify("kept checkpoint of a forked log", f.proof(12), obj{"checkpoint": f.fork.Checkpoint(10, f.issuer), "consistency": f.consistency(10, 12)})
	verify("consistency proof missing", f.proof(12), obj{"checkpoint": f.checkpoint(10)})
	verify("consistency proof unavailable", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency_unavailable": true})
	verify("consistency proof unavailable, the kept checkpoint the same", f.proof(12), obj{"checkpoint": f.checkpoint(12), "consistency_unavailable": true})
	verify("consistency proof unavailable and given", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency": f.consistency(10, 12), "consistency_unavailable": true})
	// The issuer's answer as it came (consistency_answer): the core reads the proof out of it.
	answer := string(mustJSON(t, obj{"consistency": f.consistency(10, 12)}))
	verify("consistency answer", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency_answer": answer})
	// As the issuer serves it, its checkpoint beside the proof: what the
	// CLI's log verify hands over, the checkpoint also given as checkpoint.
	served := string(mustJSON(t, obj{"checkpoint": f.checkpoint(12), "consistency": f.consistency(10, 12)}))
	verify("consistency answer as served, with its checkpoint", f.proof(10), obj{"checkpoint": f.checkpoint(12), "consistency_answer": served})
	verify("consistency answer not JSON", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency_answer": "<html>busy</html>"})
	verify("consistency answer of numbers", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency_answer": `{"consistency":[1,2]}`})
	verify("consistency answer without the proof", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency_answer": `{"hashes":[]}`})
	verify("consistency answer and consistency", f.proof(12), obj{"checkpoint": f.checkpoint(10), "consistency": f.consistency(10, 12), "consistency_answer": answer})
	verify("kept checkpoint of another log", f.proof(12), obj{"checkpoint": (&coretest.Log{Origin: "other.example/log", Entries: f.log.Entries}).Checkpoint(10, f.issuer), "consistency": f.consistency(10, 12)})
	verify("kept checkpoint malformed", f.proof(12), obj{"checkpoint": "not a note", "consistency": f.consistency(10, 12)})
	edited := deepCopy(f.lock)
	edited["approved_at"] = checkNow
	verify("edited document refused", f.proof(12), obj{"document": edited})
	verify("a proof of another document", f.proof(12), obj{"document": signDoc(t, lockDoc(t, baseTools(), approvedAt), loadKey(t, "test-operator"), false)})
	verify("entry given as text", f.proof(12), obj{"document": nil, "entry": string(f.log.Entries[lockIndex])})
	verify("signed by the retired key", f.log.Proof(lockIndex, 12, f.retired), nil)
	verify("signed by a foreign key", f.log.Proof(lockIndex, 12, f.foreign), nil)
	verify("cosigned by a witness", f.log.Proof(lockIndex, 12, f.foreign, f.issuer), nil)
	verify("unsigned checkpoint", f.log.Proof(lockIndex, 12), nil)
	verify("checkpoint of another log", (&coretest.Log{Origin: "other.example/log", Entries: f.log.Entries}).Proof(lockIndex, 12, f.issuer), nil)
	verify("checkpoint size edited", strings.Replace(f.proof(12), "\n12\n", "\n13\n", 1), nil)
	verify("index edited", strings.Replace(f.proof(12), "index 9\n", "index 8\n", 1), nil)
	verify("index past the tree", strings.Replace(f.proof(12), "index 9\n", "index 12\n", 1), nil)
	verify("index with a leading zero", strings.Replace(f.proof(12), "index 9\n", "index 09\n", 1), nil)
	verify("a proof hash dropped", strings.Replace(f.proof(12), f.consistencyLine(12), "", 1), nil)
	verify("not a tlog-proof", "c2sp.org/tlog-proof@v2\nindex 9\n\n"+f.checkpoint(12), nil)
	verify("no checkpoint", "c2sp.org/tlog-proof@v1\nindex 9\n", nil)
	verify("key outside its window", f.proof(12), obj{"now": "2027-02-01T00:00:00Z"})
	verify("missing key_directory", f.proof(12), obj{"key_directory": nil})
	verify("missing proof", "", obj{"proof": nil})

	consistency := func(name, note string, extra obj) {
		r := obj{"new": note, "now": checkNow, "key_directory": f.directory}
		for k, v := range extra {
			r[k] = v
		}
		add("log_consistency", name, r)
	}
	consistency("first checkpoint", f.checkpoint(10), nil)
	consistency("grown", f.checkpoint(16), obj{"checkpoint": f.checkpoint(10), "consistency": f.consistency(10, 16)})
	consistency("grown from one entry", f.checkpoint(16), obj{"checkpoint": f.checkpoint(1), "consistency": f.consistency(1, 16)})
	consistency("the same", f.checkpoint(10), obj{"checkpoint": f.checkpoint(10)})
	consistency("forked", f.fork.Checkpoint(16, f.issuer), obj{"checkpoint": f.checkpoint(10), "consistency": f.consistency(10, 16)})
	consistency("same size, another root", f.fork.Checkpoint(10, f.issuer), obj{"checkpoint": f.checkpoint(10)})
	consistency("shrunk", f.checkpoint(10), obj{"checkpoint": f.checkpoint(16), "consistency": f.consistency(10, 16)})
	consistency("bad signature", strings.Replace(f.checkpoint(16), "\n16\n", "\n17\n", 1), obj{"checkpoint": f.checkpoint(10), "consistency": f.consistency(10, 16)})
	consistency("consistency hash not base64", f.checkpoint(16), obj{"checkpoint": f.checkpoint(10), "consistency": []any{"%%%"}})
	return vs
}

// consistencyLine is the last hash line of the lockfile's proof at size.
func (f *logFixture) consistencyLine(size int) string {
	hs := coretest.B64(f.log.Inclusion(lockIndex, size))
	return hs[len(hs)-1] + "\n"
}

// logCheck is a continuity check of the log's signed lockfile, unchanged,
// with the log member given.
func (f *logFixture) check(t testing.TB, mode string, log obj) obj {
	r := continuityRequest(f.lock, []string{page(t, baseTools(), "")}, mode)
	r["key_directory"] = f.directory
	r["log"] = log
	return r
}
