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
	ops    []string // Known ops the core lists
	listed map[string]bool
	native func(op string, request []byte) []byte
}

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
		return r.makeLockRequest(r.tools())
	case "verify_lock":
		req := object().set("lock", r.document(r.lock()))
		req.set("now", str(r.timestamp()))
		if r.IntN(2) == 0 {
			req.set("operator_keys", array(str(r.publicKey())))
		}
		if r.IntN(3) == 0 {
			req.set("require_signed", boolean(r.IntN(2) == 0))
		}
		return req
	case "sign_lock":
		req := object().set("lock", r.document(r.unsignedLock()))
		req.set("private_key", str(r.privateKey()))
		if r.IntN(3) == 0 {
			req.set("key_id", str(r.words(2)))
		}
		return req
	case "diff":
		old := r.tools()
		var oldSide *node
		if r.IntN(3) == 0 {
			oldSide = r.document(r.lockOf(old))
		} else {
			oldSide = r.source(old, object())
		}
		return object().set("old", oldSide).set("new", r.source(r.mutate(old), object()))
	case "lock_check":
		tools := r.tools()
		req := object().set("lock", r.document(r.lockOf(tools)))
		r.source(r.mutate(tools), req)
		if r.IntN(4) == 0 {
			req.set("server_name", str(r.words(2)))
		}
		if r.IntN(8) == 0 {
			req.set("unreachable", boolean(true))
		}
		return req
	default: // continuity_check
		tools := r.tools()
		req := object().set("lock", r.document(r.lockOf(tools)))
		r.source(r.mutate(tools), req)
		req.set("now", str(r.timestamp()))
		req.set("mode", str([]string{"observe", "review", "enforce"}[r.IntN(3)]))
		return req
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
	if nPages == 1 && r.IntN(4) == 0 {
		return req.set("pages", array(str(r.damage(text(r.Rand, r.toolArray(tools))))))
	}
	pages := array()
	for p := range nPages {
		lo, hi := p*len(tools)/nPages, (p+1)*len(tools)/nPages
		result := object().set("tools", r.toolArray(tools[lo:hi]))
		if p < nPages-1 {
			result.set("nextCursor", str(fmt.Sprintf("cursor-%d", p+1)))
		} else if r.IntN(4) == 0 {
			result.set("nextCursor", null())
		}
		page := result
		if r.IntN(3) == 0 {
			page = object().set("jsonrpc", str("2.0")).set("id", num(fmt.Sprint(p+1))).set("result", result)
		}
		pages.vals = append(pages.vals, str(r.damage(text(r.Rand, page))))
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

// document is a lockfile as a request field: the file's bytes as a string,
// or (when they are JSON) spliced in as a value.
func (r *rng) document(file string) *node {
	if r.IntN(2) == 0 && json.Valid([]byte(file)) {
		return &node{force: file}
	}
	return str(file)
}

func (r *rng) makeLockRequest(tools []*node) *node {
	req := r.source(tools, object())
	if r.IntN(3) == 0 {
		req.set("format", str("agentgate"))
		req.set("generated_at", str(r.timestamp()))
		if r.IntN(2) == 0 {
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
	req := r.makeLockRequest(tools)
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

// lock is a lockfile, signed by the native core half the time.
func (r *rng) lock() string {
	file := r.lockOf(r.tools())
	if !r.gen.listed["sign_lock"] || r.IntN(2) == 0 {
		return file
	}
	resp := r.result("sign_lock", object().set("lock", str(file)).set("private_key", str(r.privateKey())))
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

// privateKey is a base64 Ed25519 seed, now and then of the wrong length
// or not base64 at all.
func (r *rng) privateKey() string {
	n := 32
	switch r.IntN(20) {
	case 0:
		n = 31
	case 1:
		return "not base64!"
	}
	seed := make([]byte, n)
	for i := range seed {
		seed[i] = byte(r.IntN(4)) // few distinct keys, so some lockfiles verify
	}
	return base64.StdEncoding.EncodeToString(seed)
}

// publicKey is the public key of a random seed, from the native core when
// it has public_key, else arbitrary base64.
func (r *rng) publicKey() string {
	seed := r.privateKey()
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
