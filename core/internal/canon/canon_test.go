package canon

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/cerr"
	jcs "github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
)

func canonicalize(t testing.TB, in []byte) []byte {
	t.Helper()
	v, err := Parse(in)
	if err != nil {
		t.Fatalf("Parse(%q): %v", in, err)
	}
	return Canonical(v)
}

// The reference module's own vectors: testdata/input/*.json → testdata/output/*.json.
func TestReferenceVectors(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cyberphone/json-canonicalization").Output()
	if err != nil {
		t.Fatalf("locating the reference module: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "testdata")
	inputs, _ := filepath.Glob(filepath.Join(dir, "input", "*.json"))
	if len(inputs) < 6 {
		t.Fatalf("found %d reference vectors in %s, want at least 6", len(inputs), dir)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "output", filepath.Base(in)))
			if err != nil {
				t.Fatal(err)
			}
			if got := canonicalize(t, src); !bytes.Equal(got, bytes.TrimRight(want, "\n")) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestAgreesWithReference(t *testing.T) {
	docs := []string{
		`{"b":1,"a":[1,2.50,-0,1e21,1e-7,0.000001,123456789012345678901234567890]}`,
		`{"\u20ac":1,"\ud83d\ude00":2,"\ufb33":3,"a\u0000":4,"":5}`,
		`["<>&\u2028\u2029","\u001f\u007f","\"\\\/\b\f\n\r\t"]`,
		`{"nested":{"z":{"y":[{"x":null,"w":true,"v":false}]}}}`,
		`[9007199254740993, -9007199254740993, 1E+2, 5e-324, 1.7976931348623157e308]`,
	}
	for _, d := range docs {
		want, err := jcs.Transform([]byte(d))
		if err != nil {
			t.Fatalf("reference refused %s: %v", d, err)
		}
		if got := canonicalize(t, []byte(d)); !bytes.Equal(got, want) {
			t.Errorf("%s\n got  %s\n want %s", d, got, want)
		}
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		doc  string
		code cerr.Code
	}{
		{`{"a":1,"a":2}`, cerr.JSONDuplicateKey},
		{`{"a":1,"\u0061":2}`, cerr.JSONDuplicateKey},
		{`{"b":{"x":1,"y":2,"x":3}}`, cerr.JSONDuplicateKey},
		{"\"\xff\"", cerr.JSONInvalidUTF8},
		{"\"a\xc3\"", cerr.JSONInvalidUTF8},
		{"\"\xed\xa0\x80\"", cerr.JSONInvalidUTF8}, // a surrogate encoded in UTF-8
		{`"\ud800"`, cerr.JSONLoneSurrogate},
		{`"\udc00"`, cerr.JSONLoneSurrogate},
		{`"\ud800\u0041"`, cerr.JSONLoneSurrogate},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), cerr.JSONTooDeep},
		{`1e400`, cerr.JSONNumberOutOfRange},
		{`-1e400`, cerr.JSONNumberOutOfRange},
		{`{"a":1,}`, cerr.JSONSyntax},
		{`[1,]`, cerr.JSONSyntax},
		{`01`, cerr.JSONSyntax},
		{`1.`, cerr.JSONSyntax},
		{`NaN`, cerr.JSONSyntax},
		{"\"a\tb\"", cerr.JSONSyntax},
		{`"\x"`, cerr.JSONSyntax},
		{"\ufeff{}", cerr.JSONSyntax},
		{`{} {}`, cerr.JSONSyntax},
		{``, cerr.JSONSyntax},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc))
		if got := cerr.CodeOf(err); err == nil || got != c.code {
			t.Errorf("Parse(%q) = %v, want code %s", c.doc, err, c.code)
		}
	}
	if _, err := Parse([]byte(strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth))); err != nil {
		t.Errorf("depth %d refused: %v", MaxDepth, err)
	}
	big := make([]byte, MaxBytes+1)
	if _, err := Parse(big); cerr.CodeOf(err) != cerr.InputTooLarge {
		t.Errorf("oversized document: %v", err)
	}
}

func TestUTF16Order(t *testing.T) {
	// U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FB33 although its
	// code point is larger.
	keys := []string{"\uFB33", "\U0001F600", "\u00e9", "a", ""}
	for i := 1; i < len(keys); i++ {
		if CompareKeys(keys[i], keys[i-1]) >= 0 {
			t.Errorf("%q should sort before %q", keys[i], keys[i-1])
		}
	}
	if CompareKeys("\U0001F600", "\U0001F601") >= 0 || CompareKeys("ab", "ab") != 0 {
		t.Error("order within the astral plane or equality broken")
	}
}

func TestIndentKeepsOrder(t *testing.T) {
	v := Obj(M("z", Int(1)), M("a", Arr()), M("m", Obj(M("k", Str("<\n>")))))
	want := "{\n  \"z\": 1,\n  \"a\": [],\n  \"m\": {\n    \"k\": \"<\\n>\"\n  }\n}\n"
	if got := string(Indent(v)); got != want {
		t.Errorf("Indent:\n%s\nwant\n%s", got, want)
	}
	if got := string(Canonical(v)); got != `{"a":[],"m":{"k":"<\n>"},"z":1}` {
		t.Errorf("Canonical: %s", got)
	}
}

func objectOfKeys(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		// Reverse order so the sort does real work.
		fmt.Fprintf(&b, `"k%08d":%d`, n-i, i)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func benchmarkObject(b *testing.B, n int) {
	doc := objectOfKeys(n)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		v, err := Parse(doc)
		if err != nil {
			b.Fatal(err)
		}
		Canonical(v)
	}
}

// The ratio of these two is the scaling check of the core issue: n log n is
// about 170×, quadratic would be 10,000×; the target is at most 250×.
func BenchmarkCanonicalize1kKeys(b *testing.B)   { benchmarkObject(b, 1_000) }
func BenchmarkCanonicalize100kKeys(b *testing.B) { benchmarkObject(b, 100_000) }

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":[1,2,{"c":"\u00e9"}],"a":null}`, `[1e21,-0,0.1]`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	// The same long array again and again at depths 2 and 3, so the
	// container memo keeps it (at its second reading while the memo has
	// room, by its ninth whatever it holds: Sightings) and gives it after,
	// as a first element too (containers.go).
	long := longArray(0)
	f.Add([]byte(`[` + strings.Repeat(long+`,`, 9) + long + `]`))
	f.Add([]byte(`[[` + long + `,1],[` + long + `,2],[` + long + `,3]]`))
	f.Add([]byte(`{"a":` + long + `,"b":` + long + `,"c":{"d":` + long + `}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			if cerr.CodeOf(err) == cerr.Internal {
				t.Fatalf("uncoded error: %v", err)
			}
			return
		}
		got := Canonical(v)
		// Size is the length but for the strings' escapes.
		for _, w := range []Value{v, rebuilt(v)} {
			if n := Size(w); n > len(got) || (n != len(got) && !bytes.Contains(got, []byte(`\`))) {
				t.Fatalf("Size %d of %d canonical bytes %s", n, len(got), got)
			}
		}
		// Copying already-canonical text writes what rebuilding writes.
		if slow := Canonical(rebuilt(v)); !bytes.Equal(got, slow) {
			t.Fatalf("raw copy differs from the rebuilt form:\n in   %q\n got  %s\n want %s", data, got, slow)
		}
		// Canonical output parses back to itself.
		v2, err := Parse(got)
		if err != nil {
			t.Fatalf("canonical output does not parse: %v\n%s", err, got)
		}
		if again := Canonical(v2); !bytes.Equal(again, got) {
			t.Fatalf("not idempotent:\n%s\n%s", got, again)
		}
		// Where the reference accepts the document, it agrees byte for byte.
		if want, err := jcs.Transform(data); err == nil && !bytes.Equal(got, want) {
			t.Fatalf("differs from the reference:\n in   %q\n got  %s\n want %s", data, got, want)
		}
	})
}

// rebuilt is v made again with the builders, so nothing in it is raw: the
// serializer then writes every value one by one.
func rebuilt(v Value) Value {
	switch v.kind {
	case Array:
		elems := make([]Value, len(v.arr()))
		for i, e := range v.arr() {
			elems[i] = rebuilt(e)
		}
		return Arr(elems...)
	case Object:
		ms := make([]Member, len(v.obj()))
		for i, m := range v.obj() {
			ms[i] = M(m.Key, rebuilt(m.Value))
		}
		return Obj(ms...)
	}
	return v
}

// TestRawCopy: an array or object whose text is already canonical is copied
// as it is (raw), and anything the canonical form writes otherwise anywhere
// inside it leaves it to be rebuilt; both give the reference's bytes.
func TestRawCopy(t *testing.T) {
	cases := []struct {
		doc string
		raw bool // the document's root is copied
	}{
		{`{"a":[1,"x",{"b":null}],"c":"q\"\\\b\f\n\r\t\u0000\u001f","d":-1.5,"e":1e+21}`, true},
		{`[[1,2],{"a":true}]`, true},
		{`["\u007f"]`, false}, // JCS writes U+007F as itself
		{`["x\u00e9"]`, false},
		{`["\/"]`, false},
		{`["\u001F"]`, false},
		{`["\u0041"]`, false},
		{`["\n"]`, false},    // canonical, but the first string is the parser's copy
		{`["a","\n"]`, true}, // a later escaped string does not matter
		{`{"\n":1}`, false},
		{`{"":1}`, false},
		{`[""]`, false},
		{`[true,1]`, false},
		{`[{},1]`, false},
		{`[ 1]`, false},
		{`{"a" :1}`, false},
		{`{"b":1,"a":2}`, false},
		{`[-0]`, false},
		{`[1.0]`, false},
		{`[1E2]`, false},
		{`[1e2]`, false},
		{`[100000000000000000000]`, true},
		{`[1000000000000000000001]`, false},
		{`{"a":{"c":1,"b":2}}`, false},
		{`{"a":{"b":2,"c":1}}`, true},
		{"[\"\u2028\xf0\x9f\x98\x80\"]", true},
	}
	for _, c := range cases {
		v, err := ParseString(c.doc)
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		if got := v.n != 0; got != c.raw {
			t.Errorf("%s: raw %v, want %v", c.doc, got, c.raw)
		}
		got, slow := Canonical(v), Canonical(rebuilt(v))
		want, err := jcs.Transform([]byte(c.doc))
		if err != nil {
			t.Fatalf("reference refused %s: %v", c.doc, err)
		}
		if !bytes.Equal(got, want) || !bytes.Equal(slow, want) {
			t.Errorf("%s:\n got     %s\n rebuilt %s\n want    %s", c.doc, got, slow, want)
		}
		if c.raw && string(got) != c.doc {
			t.Errorf("%s: raw, but written as %s", c.doc, got)
		}
	}
}

// TestAnswerErrorAfterResultIgnoresTheID: a frame that puts its id after
// its result and is cut off after it is refused in the same words whatever
// id the host chose (the gateway's are longer than check's), where the
// offset "of its result" had counted the id; within the result, the offset
// still counts from its start.
func TestAnswerErrorAfterResultIgnoresTheID(t *testing.T) {
	msg := func(s string) string {
		_, err := ParseAnswerString(s)
		if err == nil {
			t.Fatalf("%s parsed", s)
		}
		return err.Error()
	}
	for _, tail := range []string{``, `}x`, `,`} {
		short := msg(`{"result":{"tools":[]},"jsonrpc":"2.0","id":7` + tail)
		long := msg(`{"result":{"tools":[]},"jsonrpc":"2.0","id":"gateway-000000007"` + tail)
		if short != long || !strings.Contains(short, "after its result") {
			t.Errorf("tail %q: %q and %q", tail, short, long)
		}
	}
	if m := msg(`{"jsonrpc":"2.0","id":7,"result":{"tools":[x]}}`); !strings.Contains(m, "at offset 10 of its result") {
		t.Errorf("within the result: %q", m)
	}
}
