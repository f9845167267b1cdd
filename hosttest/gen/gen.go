// Package gen makes random, reproducible calls for the differential test:
// the same call goes to native core.Call, the wasm module and the C library,
// and the three responses must be the same bytes.
//
// A call is a pure function of its seed, so a failure is replayed from the
// seed alone. The generator only makes calls for ops the core lists in its
// version result, so it works on a core under construction and grows with
// it; until an op it knows is listed, it exercises the envelope plumbing
// (version, unknown ops, broken requests), which must be identical too.
//
// The requests aim at the places implementations drift: unicode (astral
// characters, escapes in both hex cases, U+2028), numbers (negative zero,
// exponents, beyond 2^53, overflow), key order and whitespace, deep schemas,
// duplicate keys and lone surrogates, tool lists paged with nextCursor
// (truncated, repeated cursors, JSON-RPC wrapped), lists mutated by renames,
// additions, removals and part edits, and lockfiles signed and tampered with.
package gen

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Call is one generated call.
type Call struct {
	Op      string
	Request []byte
}

// Known lists the ops the generator makes requests for.
var Known = []string{"canonicalize", "hash_tools", "make_lock", "verify_lock", "sign_lock",
	"diff", "lock_check", "continuity_check"}

// Gen makes calls. Native answers the calls the generator itself needs to
// build inputs (a lockfile to verify, a key to trust); it is never compared.
type Gen struct {
	// Keys sign lockfiles besides the generator's own; Directory is a key
	// directory document to verify against. The test keys of testdata/keys
	// go here, so that some lockfiles are issuer-signed and verify.
	Keys      []Key
	Directory string

	ops    []string // Known ops the core lists
	listed map[string]bool
	native func(op string, request []byte) []byte
}

// Key is a signing key: its key id and base64 Ed25519 seed.
type Key struct{ ID, Seed string }

// New returns a generator for the ops listed (the version result's ops).
func New(listed []string, native func(op string, request []byte) []byte) *Gen {
	g := &Gen{listed: map[string]bool{}, native: native}
	for _, op := range listed {
		g.listed[op] = true
	}
	for _, op := range Known {
		if g.listed[op] {
			g.ops = append(g.ops, op)
		}
	}
	return g
}

// Ops are the known ops this generator exercises.
func (g *Gen) Ops() []string { return slices.Clone(g.ops) }

// rng is the random source of one call, with the generators of its parts.
type rng struct {
	*rand.Rand
	gen *Gen
}

// Case is the call for seed.
func (g *Gen) Case(seed uint64) Call {
	r := &rng{Rand: rand.New(rand.NewPCG(seed, 0x63726177)), gen: g}
	if len(g.ops) == 0 || r.IntN(20) == 0 {
		return r.plumbing()
	}
	op := g.ops[r.IntN(len(g.ops))]
	req := r.request(op)
	w := writer{r: r.Rand}
	w.write(req)
	return Call{Op: op, Request: r.breakBytes(w.b)}
}

// plumbing is a call every core answers: version, or an op that does not
// exist, with a request that may not even be JSON.
func (r *rng) plumbing() Call {
	var body []byte
	if r.IntN(2) == 0 {
		w := writer{r: r.Rand}
		w.write(r.value(3))
		body = r.breakBytes(w.b)
	} else {
		body = []byte("{}")
	}
	if r.IntN(3) == 0 {
		return Call{Op: "version", Request: body}
	}
	return Call{Op: strings.ReplaceAll(r.words(3), "\x00", ""), Request: body}
}

// breakBytes damages a request now and then: the errors must be as
// identical as the answers.
func (r *rng) breakBytes(b []byte) []byte {
	if r.IntN(25) != 0 || len(b) < 2 {
		return b
	}
	switch r.IntN(5) {
	case 0:
		return b[:r.IntN(len(b))] // truncated
	case 1:
		return append(b, " x"...) // trailing garbage
	case 2:
		i := r.IntN(len(b))
		return slices.Concat(b[:i], []byte{0xff}, b[i:]) // invalid UTF-8
	case 3:
		return slices.Concat([]byte("\ufeff"), b) // a byte order mark
	default:
		return slices.Concat(b, []byte{'\n'}) // trailing whitespace: fine
	}
}

// request makes the request object for op.
func (r *rng) request(op string) *node {
	switch op {
	case "canonicalize":
		var doc *node
		if r.IntN(2) == 0 {
			doc = r.toolArray(r.tools())
		} else {
			doc = r.value(5)
		}
		return object().set("json", str(r.damage(text(r.Rand, doc))))
	case "hash_tools":
		return r.source(r.tools(), object())
	case "make_lock":
		return r.makeLockRequest(r.tools(), false)
	case "verify_lock":
		req := object().set("lock", r.document(r.lock(r.tools())))
		req.set("now", str(r.timestamp()))
		r.trust(req)
		if r.IntN(3) == 0 {
			req.set("require_signed", boolean(r.IntN(2) == 0))
		}
		return req
	case "sign_lock":
		req := object().set("lock", r.document(r.unsignedLock()))
		k := r.key()
		req.set("private_key", str(k.Seed))
		if k.ID != "" {
			req.set("key_id", str(k.ID))
		} else if r.IntN(8) == 0 {
			req.set("key_id", str(r.words(2)))
		}
		return req
	case "diff":
		old := r.tools()
		var oldSide *node
		if r.IntN(3) == 0 {
			oldSide = r.document(r.lockOf(old))
		} else {
			oldSide = r.document(text(r.Rand, r.page(old, "")))
		}
		return object().set("old", oldSide).set("new", r.document(text(r.Rand, r.page(r.mutate(old), ""))))
	case "lock_check":
		tools := r.tools()
		req := object().set("lock", r.document(r.lockOf(tools)))
		r.source(r.mutate(tools), req)
		r.failure(req)
		if r.IntN(4) == 0 {
			req.set("server_name", str(r.words(2)))
		}
		return req
	default: // continuity_check
		return r.continuityRequest()
	}
}

// continuityRequest is a continuity_check of a mutated list against a
// lockfile of the original, under a random mode, policy and trust.
func (r *rng) continuityRequest() *node {
	tools := r.tools()
	req := object().set("lock", r.document(r.lock(tools)))
	req.set("now", str(r.timestamp()))
	if r.IntN(4) != 0 {
		req.set("mode", str([]string{"observe", "review", "enforce"}[r.IntN(3)]))
	}
	observed := object()
	if r.IntN(10) != 0 {
		r.source(r.mutate(tools), observed)
		observed.del("tools") // observed tools arrive as pages only
		if observed.get("pages") == nil {
			observed.set("pages", array(str(text(r.Rand, r.page(r.mutate(tools), "")))))
		}
	}
	r.failure(observed)
	if r.IntN(2) == 0 {
		observed.set("endpoint", str("https://mcp.example.com/"+r.words(1)))
		observed.set("protocol_version", str([]string{"2025-06-18", "2025-11-25", "2026-07-28"}[r.IntN(3)]))
		observed.set("handshake", str([]string{"initialize", "server/discover"}[r.IntN(2)]))
	}
	if r.IntN(3) == 0 {
		observed.set("server_info", r.value(2))
	}
	req.set("observed", observed)
	if r.IntN(3) == 0 {
		req.set("policy", r.policy())
	}
	if r.IntN(6) == 0 {
		req.set("expected_policy_version", str([]string{"p1", "default", r.words(1)}[r.IntN(3)]))
	}
	r.trust(req)
	if r.IntN(5) == 0 {
		req.set("require_signed_baseline", boolean(r.IntN(2) == 0))
	}
	if r.IntN(6) == 0 {
		obs := []string{"evidence_expired", "signature_invalid", "key_unknown", "key_retired",
			"server_identity_mismatch", "decision_refused", "service_unavailable", "unchanged"}
		req.set("evidence", array(object().set("observation", str(obs[r.IntN(len(obs))])).set("detail", r.value(1))))
	}
	if r.IntN(5) == 0 {
		req.set("prev_record_sha256", str(fmt.Sprintf("%064x", r.Uint64())))
	}
	if r.IntN(8) == 0 {
		req.set("refreshed", boolean(true))
	}
	return req
}

// policy is a crawlcheck-policy document, sometimes a broken one.
func (r *rng) policy() *node {
	p := object().set("kind", str("crawlcheck-policy")).set("v", num("1")).set("version", str("p1"))
	if r.IntN(3) == 0 {
		p.set("max_baseline_age_days", num([]string{"1", "90", "36500", "0", "1.5", "1e1"}[r.IntN(6)]))
	}
	effects := object()
	obs := []string{"tool_added", "tool_removed", "description_changed", "schema_changed", "annotations_changed",
		"signature_invalid", "baseline_stale", "response_malformed", "tool_list_truncated", "no_such_observation"}
	effs := []string{"proceed", "proceed_recorded", "refresh", "pause_tool", "pause", "deny", "explode"}
	for range r.IntN(4) {
		effects.set(obs[r.IntN(len(obs))], str(effs[r.IntN(len(effs))]))
	}
	p.set("effects", effects)
	if r.IntN(4) == 0 {
		p.set("allow_integrity_override", boolean(r.IntN(2) == 0))
	}
	if r.IntN(4) == 0 {
		p.set("require_signed_baseline", boolean(r.IntN(2) == 0))
	}
	return r.document(text(r.Rand, p))
}

// failure adds, now and then, what a binding reports when it has no
// (complete) list: a failure, or that it stopped at the page cap.
func (r *rng) failure(req *node) {
	switch r.IntN(12) {
	case 0:
		req.set("failure", str([]string{"server_unavailable", "check_timeout", "other"}[r.IntN(3)]))
		req.set("failure_detail", str(r.words(3)))
		if r.IntN(2) == 0 {
			req.del("pages")
			req.del("tools")
		}
	case 1:
		req.set("page_cap_reached", boolean(true))
	}
}

// trust adds keys to verify a lockfile with: the key directory and
// operator public keys.
func (r *rng) trust(req *node) {
	if r.gen.Directory != "" && r.IntN(2) == 0 {
		req.set("key_directory", r.document(r.gen.Directory))
	}
	if r.IntN(2) == 0 {
		req.set("operator_keys", array(str(r.publicKey())))
	}
}

// damage breaks a document in a way the strict parser must refuse, now
// and then.
func (r *rng) damage(doc string) string {
	if r.IntN(8) != 0 || doc == "" {
		return doc
	}
	switch r.IntN(4) {
	case 0:
		return `{"a":1,"a":2}` // duplicate key
	case 1:
		return `["\ud800"]` // lone surrogate
	case 2:
		return strings.Repeat("[", 129) + strings.Repeat("]", 129) // too deep
	default:
		return doc[:r.IntN(len(doc))]
	}
}

// tools makes a random tool list.
func (r *rng) tools() []*node {
	n := r.IntN(7)
	if r.IntN(10) == 0 {
		n = 10 + r.IntN(40)
	}
	ts := make([]*node, n)
	for i := range ts {
		ts[i] = r.tool(fmt.Sprintf("tool_%d", i))
	}
	if r.IntN(30) == 0 && n > 0 {
		ts = append(ts, ts[0].clone()) // a duplicate name: tools_malformed
	}
	return ts
}

func (r *rng) tool(name string) *node {
	if r.IntN(3) == 0 {
		name = r.words(3) // a unicode name
	}
	t := object().set("name", str(name))
	if r.IntN(6) != 0 {
		t.set("description", str(r.words(8)))
	}
	if r.IntN(8) != 0 {
		t.set("inputSchema", r.schema(r.depth()))
	}
	if r.IntN(2) == 0 {
		a := object()
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if r.IntN(2) == 0 {
				a.set(k, boolean(r.IntN(2) == 0))
			}
		}
		if r.IntN(3) == 0 {
			a.set("title", str(r.words(2)))
		}
		t.set("annotations", a)
	}
	if r.IntN(4) == 0 { // fields the hash ignores
		t.set("title", str(r.words(2)))
		t.set("_meta", r.value(2))
	}
	if r.IntN(40) == 0 { // malformed: tools_malformed or response_malformed
		switch r.IntN(4) {
		case 0:
			t.set("name", str(""))
		case 1:
			t.set("name", num("1"))
		case 2:
			t.set("description", r.value(1))
		default:
			t.set("inputSchema", array())
		}
	}
	return t
}

// depth of a schema: mostly shallow, sometimes deep, rarely past the limit.
func (r *rng) depth() int {
	switch r.IntN(20) {
	case 0:
		return 20 + r.IntN(40)
	case 1:
		if r.IntN(4) == 0 {
			return 126 + r.IntN(6) // around the 128 nesting limit
		}
	}
	return r.IntN(4)
}

func (r *rng) schema(depth int) *node {
	s := object().set("type", str("object"))
	props := object()
	for range 1 + r.IntN(3) {
		var p *node
		if depth > 0 && r.IntN(2) == 0 {
			p = r.schema(depth - 1)
			depth = 0 // one deep branch, not a tree
		} else {
			p = object().set("type", str([]string{"string", "number", "integer", "boolean"}[r.IntN(4)]))
			if r.IntN(3) == 0 {
				p.set("description", str(r.words(4)))
			}
			if r.IntN(4) == 0 {
				p.set("default", num(r.number()))
			}
			if r.IntN(5) == 0 {
				p.set("enum", array(str(r.words(1)), num(r.number()), null()))
			}
		}
		props.set(r.words(2), p)
	}
	s.set("properties", props)
	if r.IntN(3) == 0 {
		s.set("required", array(str(props.keys[0])))
	}
	if r.IntN(4) == 0 {
		s.set("additionalProperties", boolean(false))
	}
	return s
}

// mutate returns a changed copy of a tool list: renames, additions,
// removals, part edits, reordering, or a respelling that changes nothing.
func (r *rng) mutate(tools []*node) []*node {
	out := make([]*node, len(tools))
	for i, t := range tools {
		out[i] = t.clone()
	}
	for range r.IntN(4) {
		switch r.IntN(8) {
		case 0:
			out = append(out, r.tool(fmt.Sprintf("added_%d", len(out))))
		case 1:
			if len(out) > 0 {
				i := r.IntN(len(out))
				out = slices.Delete(out, i, i+1)
			}
		case 2:
			if len(out) > 0 {
				out[r.IntN(len(out))].set("name", str("renamed_"+r.words(1)))
			}
		case 3:
			if len(out) > 0 {
				out[r.IntN(len(out))].set("description", str(r.words(6)))
			}
		case 4:
			if len(out) > 0 {
				out[r.IntN(len(out))].set("inputSchema", r.schema(r.depth()))
			}
		case 5:
			if len(out) > 0 {
				t := out[r.IntN(len(out))]
				if t.get("annotations") != nil {
					t.del("annotations")
				} else {
					t.set("annotations", object().set("readOnlyHint", boolean(false)))
				}
			}
		case 6:
			r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		default:
			// unchanged: the writer respells it anyway
		}
	}
	return out
}

func (r *rng) toolArray(tools []*node) *node { return array(tools...) }

// source adds a tool source to req: "tools" inline, or "pages", each page
// the bytes of a tools/list result, a JSON-RPC response or a bare array.
func (r *rng) source(tools []*node, req *node) *node {
	if r.IntN(2) == 0 {
		return req.set("tools", r.toolArray(tools))
	}
	nPages := 1 + r.IntN(min(4, len(tools)+1))
	pages := array()
	for p := range nPages {
		lo, hi := p*len(tools)/nPages, (p+1)*len(tools)/nPages
		cursor := ""
		if p < nPages-1 {
			cursor = fmt.Sprintf("cursor-%d", p+1)
		}
		pages.vals = append(pages.vals, str(r.damage(text(r.Rand, r.page(tools[lo:hi], cursor)))))
	}
	switch r.IntN(12) {
	case 0: // truncated: the last page's nextCursor is never followed
		if len(pages.vals) > 1 {
			pages.vals = pages.vals[:len(pages.vals)-1]
		}
	case 1: // a repeated cursor
		if len(pages.vals) > 1 {
			pages.vals = append(pages.vals[:len(pages.vals)-1], pages.vals[0])
		}
	}
	return req.set("pages", pages)
}

// page is one tools/list page: a result with nextCursor when cursor is set,
// maybe wrapped in a JSON-RPC response, or (without a cursor) now and then
// a bare array of tools.
func (r *rng) page(tools []*node, cursor string) *node {
	if cursor == "" && r.IntN(6) == 0 {
		return r.toolArray(tools)
	}
	result := object().set("tools", r.toolArray(tools))
	if cursor != "" {
		result.set("nextCursor", str(cursor))
	} else if r.IntN(4) == 0 {
		result.set("nextCursor", null())
	}
	if r.IntN(3) == 0 {
		return object().set("jsonrpc", str("2.0")).set("id", num(fmt.Sprint(1+r.IntN(9)))).set("result", result)
	}
	return result
}

// document is a lockfile as a request field: the file's bytes as a string,
// or (when they are JSON) spliced in as a value.
func (r *rng) document(file string) *node {
	if r.IntN(2) == 0 && json.Valid([]byte(file)) {
		return &node{force: file}
	}
	return str(file)
}

// makeLockRequest is a make_lock request; a lockfile the generator needs
// as an input (inline) takes its tools inline, so that it rarely fails.
func (r *rng) makeLockRequest(tools []*node, inline bool) *node {
	req := object()
	if inline {
		req.set("tools", r.toolArray(tools))
	} else {
		r.source(tools, req)
	}
	if r.IntN(3) == 0 {
		req.set("format", str("agentgate"))
		if r.IntN(16) != 0 {
			req.set("name", str(r.words(2)))
		}
		if r.IntN(2) == 0 {
			req.set("generated_by", str("gen@1.0.0"))
		}
	} else if r.IntN(4) == 0 {
		req.set("format", str("crawlcheck"))
	}
	req.set("approved_at", str(r.timestamp()))
	if r.IntN(2) == 0 {
		req.set("server", object().
			set("url", str("https://mcp.example.com/"+r.words(1))).
			set("protocol_version", str("2025-06-18")).
			set("info", object().set("name", str(r.words(1))).set("version", str("1.0.0"))))
	}
	return req
}

// lockOf is a lockfile of tools, made by the native core; a lockfile with
// a byte flipped now and then.
func (r *rng) lockOf(tools []*node) string {
	if !r.gen.listed["make_lock"] {
		return r.words(3) // not a lockfile: the error must be identical
	}
	req := r.makeLockRequest(tools, true)
	resp := r.result("make_lock", req)
	if resp == nil {
		return "{}"
	}
	var out struct {
		Lock string `json:"lock"`
	}
	json.Unmarshal(resp, &out)
	return r.tamper(out.Lock)
}

func (r *rng) unsignedLock() string { return r.lockOf(r.tools()) }

// lock is a lockfile of tools, signed by the native core half the time.
func (r *rng) lock(tools []*node) string {
	file := r.lockOf(tools)
	if !r.gen.listed["sign_lock"] || r.IntN(2) == 0 {
		return file
	}
	k := r.key()
	req := object().set("lock", str(file)).set("private_key", str(k.Seed))
	if k.ID != "" {
		req.set("key_id", str(k.ID))
	}
	resp := r.result("sign_lock", req)
	var out struct {
		Lock string `json:"lock"`
	}
	if json.Unmarshal(resp, &out) != nil {
		return file
	}
	return r.tamper(out.Lock)
}

// tamper flips one character of a lockfile, now and then.
func (r *rng) tamper(file string) string {
	if r.IntN(6) != 0 || len(file) == 0 {
		return file
	}
	i := r.IntN(len(file))
	c := file[i]
	if c >= 'a' && c <= 'f' {
		c = 'a' + (c-'a'+1)%6
	} else if c >= '0' && c <= '9' {
		c = '0' + (c-'0'+1)%10
	}
	return file[:i] + string(c) + file[i+1:]
}

// result asks the native core and returns the result member, nil on error.
func (r *rng) result(op string, req *node) []byte {
	w := writer{r: r.Rand, plain: true}
	w.write(req)
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(r.gen.native(op, w.b), &env) != nil || !env.OK {
		return nil
	}
	return env.Result
}

// ownSeeds are the generator's operator keys (seeds of repeated bytes), few
// so that a lockfile's signer and the key trusted to verify it often agree.
var ownSeeds = []string{
	base64.StdEncoding.EncodeToString(make([]byte, 32)),
	base64.StdEncoding.EncodeToString(slices.Repeat([]byte{7}, 32)),
}

// key is a signing key: one of Gen.Keys (with its key id), one of the
// generator's own operator keys (no key id), or now and then a broken seed.
func (r *rng) key() Key {
	switch n := r.IntN(20); {
	case n == 0:
		return Key{Seed: base64.StdEncoding.EncodeToString(make([]byte, 31))}
	case n == 1:
		return Key{Seed: "not base64!"}
	case n < 10 && len(r.gen.Keys) > 0:
		return r.gen.Keys[r.IntN(len(r.gen.Keys))]
	}
	return Key{Seed: ownSeeds[r.IntN(len(ownSeeds))]}
}

// publicKey is the public key of a random key, from the native core when it
// has public_key, else the seed (which must then fail to verify anything).
func (r *rng) publicKey() string {
	seed := r.key().Seed
	if r.gen.listed["public_key"] {
		var out struct {
			PublicKey string `json:"public_key"`
		}
		if json.Unmarshal(r.result("public_key", object().set("private_key", str(seed))), &out) == nil && out.PublicKey != "" {
			return out.PublicKey
		}
	}
	return seed
}

// timestamp is an RFC 3339 time with any offset and fraction, or rarely not.
func (r *rng) timestamp() string {
	if r.IntN(30) == 0 {
		return []string{"yesterday", "2026-13-01T00:00:00Z", "2026-10-07 10:45:00Z", ""}[r.IntN(4)]
	}
	t := fmt.Sprintf("20%02d-%02d-%02dT%02d:%02d:%02d", 20+r.IntN(10), 1+r.IntN(12), 1+r.IntN(28),
		r.IntN(24), r.IntN(60), r.IntN(60))
	switch r.IntN(3) {
	case 0:
		t += "." + fmt.Sprint(r.IntN(1000000000))
	case 1:
		t += ".000"
	}
	switch r.IntN(3) {
	case 0:
		return t + "Z"
	case 1:
		return t + fmt.Sprintf("+%02d:%02d", r.IntN(15), 15*r.IntN(4))
	default:
		return t + "-05:00"
	}
}
