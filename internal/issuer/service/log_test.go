package service_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/keys"
	"github.com/crawlcheck/verifier/internal/issuer/service"
)

// signed posts a JSON body to an endpoint that signs, and answers the body
// and the tlog-proof its answer carries (failing on anything but 200).
func (e *env) signed(path string, body any) ([]byte, string) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.api+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if e.auth != "" {
		req.Header.Set("Authorization", e.auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("POST %s: %d %s", path, resp.StatusCode, out)
	}
	proof, err := base64.StdEncoding.DecodeString(resp.Header.Get(service.LogProofHeader))
	if err != nil || len(proof) == 0 {
		e.t.Fatalf("POST %s: no %s (%v)", path, service.LogProofHeader, err)
	}
	return out, string(proof)
}

type verdict struct {
	Valid  bool
	Detail *string
	Keep   *string
}

// TestSigningAnswersCarryLogProofs: a lockfile and a receipt the service
// signs each come with a tlog-proof the core verifies against the
// service's own key directory, the log grows consistently from one to the
// next, and /log/checkpoint serves the newest checkpoint.
func TestSigningAnswersCarryLogProofs(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	dir := e.ok("GET", "/api/v1/keys", "/api/v1/keys", nil)
	now := e.now.Add(time.Second).Format(time.RFC3339Nano)
	verify := func(doc []byte, proof, kept string, consistency []string) verdict {
		req := obj{"document": string(doc), "proof": proof, "now": now, "key_directory": json.RawMessage(dir)}
		if kept != "" {
			req["checkpoint"], req["consistency"] = kept, consistency
		}
		var v verdict
		json.Unmarshal(coreOp(t, "log_verify", req), &v)
		return v
	}
	lock, lockProof := e.signed("/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}})
	if v := verify(lock, lockProof, "", nil); !v.Valid {
		t.Fatalf("the lockfile's proof: %s", *v.Detail)
	}
	receipt, receiptProof := e.signed("/api/v1/mcp/lock/check", obj{"lock": string(lock), "tools": json.RawMessage(tools)})
	if v := verify(receipt, receiptProof, "", nil); !v.Valid {
		t.Fatalf("the receipt's proof: %s", *v.Detail)
	}
	if v := verify(lock, receiptProof, "", nil); v.Valid {
		t.Fatal("the receipt's proof proves the lockfile")
	}
	first := lockProof[strings.Index(lockProof, "\n\n")+2:]
	var c struct {
		Checkpoint  string
		Consistency []string
	}
	json.Unmarshal(e.ok("GET", "/api/v1/log/consistency", "/api/v1/log/consistency?from=1", nil), &c)
	if v := verify(receipt, receiptProof, first, c.Consistency); !v.Valid || *v.Keep != c.Checkpoint {
		t.Fatalf("the log did not grow consistently: %+v", v)
	}
	resp, err := http.Get(e.api + "/log/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(cp) != c.Checkpoint || !strings.HasPrefix(string(cp), "issuer.test/log\n2\n") {
		t.Fatalf("/log/checkpoint: %q", cp)
	}
}

// TestCheckpointsFollowRotation: the log's checkpoints are signed with the
// key that signs at the time of each (the service keeps the key it derived
// from a seed only while that seed signs): after a rotation and the old
// key's retirement, a new answer's proof verifies against the directory in
// which the old key is retired.
func TestCheckpointsFollowRotation(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	kd := filepath.Join(e.dir, "keys")
	lock, _ := e.signed("/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}})
	if _, err := keys.Rotate(kd, time.Hour, e.now); err != nil {
		t.Fatal(err)
	}
	st, _ := keys.Load(kd)
	e.now = e.now.Add(time.Second)
	if _, _, err := keys.Retire(kd, st.Keys[0].KID, e.now); err != nil {
		t.Fatal(err)
	}
	receipt, proof := e.signed("/api/v1/mcp/lock/check", obj{"lock": string(lock), "tools": json.RawMessage(tools)})
	dir := e.ok("GET", "/api/v1/keys", "/api/v1/keys", nil)
	var v verdict
	json.Unmarshal(coreOp(t, "log_verify", obj{"document": string(receipt), "proof": proof, "now": e.now.Add(time.Second).Format(time.RFC3339Nano), "key_directory": json.RawMessage(dir)}), &v)
	if !v.Valid {
		t.Fatalf("a checkpoint signed after the rotation: %s", *v.Detail)
	}
}

// TestConcurrentAnswersCommitTogether: answers signed at the same time are
// committed in batches (commit.go), and each still carries the proof of its
// own entry: every receipt of 24 concurrent checks verifies against its
// proof, at its own index, and every nonce is in the store once.
func TestConcurrentAnswersCommitTogether(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	dir := e.ok("GET", "/api/v1/keys", "/api/v1/keys", nil)
	lock, _ := e.signed("/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}})
	body, _ := json.Marshal(obj{"lock": string(lock), "tools": json.RawMessage(tools)})
	const n = 24
	type answer struct {
		receipt []byte
		proof   string
		err     string
	}
	answers := make(chan answer, n)
	for i := 0; i < n; i++ {
		go func() {
			resp, err := http.Post(e.api+"/api/v1/mcp/lock/check", "application/json", bytes.NewReader(body))
			if err != nil {
				answers <- answer{err: err.Error()}
				return
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			proof, _ := base64.StdEncoding.DecodeString(resp.Header.Get(service.LogProofHeader))
			if resp.StatusCode != http.StatusOK {
				answers <- answer{err: resp.Status + " " + string(out)}
				return
			}
			answers <- answer{receipt: out, proof: string(proof)}
		}()
	}
	now := e.now.Add(time.Second).Format(time.RFC3339Nano)
	indexes, nonces := map[string]bool{}, map[string]bool{}
	for i := 0; i < n; i++ {
		a := <-answers
		if a.err != "" {
			t.Fatal(a.err)
		}
		var v verdict
		json.Unmarshal(coreOp(t, "log_verify", obj{"document": string(a.receipt), "proof": a.proof, "now": now, "key_directory": json.RawMessage(dir)}), &v)
		if !v.Valid {
			t.Fatalf("a receipt's proof does not verify: %s", *v.Detail)
		}
		index := strings.SplitN(a.proof, "\n", 3)[1] // c2sp tlog-proof: "index N" on the second line
		if indexes[index] {
			t.Fatalf("two receipts with the proof of %s", index)
		}
		indexes[index] = true
		var rc struct{ Nonce string }
		json.Unmarshal(a.receipt, &rc)
		if nonces[rc.Nonce] {
			t.Fatalf("nonce %s answered twice", rc.Nonce)
		}
		nonces[rc.Nonce] = true
		if ok, err := e.st.NonceIssued(context.Background(), rc.Nonce); err != nil || !ok {
			t.Fatalf("nonce %s answered but not in the store (%v)", rc.Nonce, err)
		}
	}
}
