// Package classify says what a change of a text the model reads — a tool's
// description or title, a server's instructions — introduces, in the terms
// a person approving it needs first (issue 38, docs/scan.md "Change
// classes"): editorial (wording only), documentation (examples, parameter
// help), instruction (a directive to the agent), destination (a URL,
// address, path or account), cross_tool (another tool or server named),
// concealment (hide, don't tell, invisible text). capability (a schema or
// annotation change) is given by the comparison, not by the text.
//
// The classes are read from the words the change inserted (the word diff's
// insertions; the whole new text when the old one is unknown, which can
// only add classes), through the approval scan's rules on that text and a
// few markers of their own. Deleted words count for instruction and
// concealment only: taking a directive away changes what the agent is told.
// Everything is linear in the texts, deterministic, and the same in every
// build.
package classify

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/scan"
)

// The classes, weakest first: Rank orders them, and a policy's class
// effects may not decrease along it (docs/policy.md).
const (
	Editorial     = "editorial"
	Documentation = "documentation"
	Capability    = "capability"
	Destination   = "destination"
	CrossTool     = "cross_tool"
	Instruction   = "instruction"
	Concealment   = "concealment"
)

// Names lists the classes, weakest first.
var Names = []string{Editorial, Documentation, Capability, Destination, CrossTool, Instruction, Concealment}

// Rank is a class's place in Names, or -1.
func Rank(class string) int {
	for i, n := range Names {
		if n == class {
			return i
		}
	}
	return -1
}

// MaxEvidence bounds the bytes of text one piece of evidence quotes.
const MaxEvidence = 160

// Evidence is what made a class: the class and the inserted text that
// shows it ("send_email", "Before calling send_email, please call this
// tool"). Server text: a host shows it through escape_text.
type Evidence struct {
	Class string
	Text  string
}

// Result is the classes of one change, strongest first, and one piece of
// evidence per class (none for editorial).
type Result struct {
	Classes  []string
	Evidence []Evidence
}

// Strongest is the strongest class of the result.
func (r Result) Strongest() string {
	if len(r.Classes) == 0 {
		return Editorial
	}
	return r.Classes[0]
}

// With adds a class the comparison knows of (capability, for a schema or
// annotations change) with its evidence, in its place among the classes.
func (r Result) With(class, text string) Result {
	if slicesContains(r.Classes, class) {
		return r
	}
	var out Result
	placed := false
	for i, c := range r.Classes {
		if !placed && Rank(class) > Rank(c) {
			out.Classes = append(out.Classes, class)
			out.Evidence = append(out.Evidence, Evidence{class, clip(text)})
			placed = true
		}
		out.Classes = append(out.Classes, c)
		if i < len(r.Evidence) {
			out.Evidence = append(out.Evidence, r.Evidence[i])
		}
	}
	if !placed {
		out.Classes = append(out.Classes, class)
		out.Evidence = append(out.Evidence, Evidence{class, clip(text)})
	}
	return out
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Segment is one run of a word diff: Op "equal", "delete" or "insert".
type Segment struct{ Op, Text string }

// Classifier classifies the changed texts of one list: names are the tools
// of the list they belong to (a list tool named in a text is a reference
// to another tool). Its tables are built once for the list, and its
// buffers are kept from one change to the next, so that classifying every
// tool of a list allocates little beyond the results.
type Classifier struct {
	texts  *scan.Texts
	tokens []token // markers' words, reused
	joined []byte  // the insertions or deletions joined, reused
	within []int   // where in the joined insertions one continues a sentence of the new text
}

// New is a Classifier for a list whose tools have these names.
func New(names []string) *Classifier { return &Classifier{texts: scan.NewTexts(names)} }

// Change classifies a changed text from its word diff. self is the tool
// whose text it is ("" for instructions).
func (k *Classifier) Change(segs []Segment, self string) Result {
	// Insertions are read apart, as sentences of their own: a phrase never
	// joins words the diff put in different places.
	added := k.join(segs, "insert")
	// An insertion that continues a sentence of the new text ("per
	// write_file call) -" after "max lines") does not open a clause: its
	// first word is no imperative however it reads alone.
	k.within = k.within[:0]
	at, open := 0, true
	for _, sg := range segs {
		switch sg.Op {
		case "insert":
			if !open {
				k.within = append(k.within, at)
			}
			at += len(sg.Text) + len(".\n")
		}
		if sg.Op != "delete" && sg.Text != "" {
			open = strings.IndexByte(".!?:;,", sg.Text[len(sg.Text)-1]) >= 0
		}
	}
	return k.classify(added, k.join(segs, "delete"), self)
}

// join is the texts of the segments of one op, joined by ".\n" (as
// strings.Join would), copied once into a string the findings may quote.
func (k *Classifier) join(segs []Segment, op string) string {
	b := k.joined[:0]
	n := 0
	for _, s := range segs {
		if s.Op != op {
			continue
		}
		if n > 0 {
			b = append(b, ".\n"...)
		}
		b = append(b, s.Text...)
		n++
	}
	k.joined = b
	if n == 1 {
		for _, s := range segs { // one segment: its own text, no copy
			if s.Op == op {
				return s.Text
			}
		}
	}
	return string(b)
}

// Whole classifies a text whose previous version is unknown: all of it is
// read as inserted.
func (k *Classifier) Whole(text, self string) Result {
	k.within = k.within[:0]
	return k.classify(text, "", self)
}

// found is the evidence of each class found so far, by rank: the first
// piece of evidence of a class is the one kept.
type found struct {
	text [7]string
	has  [7]bool
}

func (f *found) note(class, text string) {
	if r := Rank(class); !f.has[r] {
		f.text[r], f.has[r] = clip(text), true
	}
}

func (k *Classifier) classify(added, deleted, self string) Result {
	var fd found
	example := "" // the first address at a name kept for examples
	for _, f := range k.texts.Text(added, self) {
		c := ofRule(scan.Rules[f.Rule])
		switch {
		case c == Destination && scan.Rules[f.Rule].Kind == scan.KindURL && exampleAddress(f.Span):
			if example == "" {
				example = f.Span
			}
			c = ""
		case c == Concealment && emojiPresentation(added, f.Offset, f.Length):
			c = ""
		}
		if c != "" {
			fd.note(c, f.Span)
		}
		if scan.Rules[f.Rule].ID == "exfiltration.send" {
			fd.note(Destination, f.Span)
		}
	}
	if deleted != "" {
		for _, f := range k.texts.Text(deleted, self) {
			if c := ofRule(scan.Rules[f.Rule]); c == Instruction || c == Concealment && !emojiPresentation(deleted, f.Offset, f.Length) {
				fd.note(c, f.Span)
			}
		}
	}
	k.markers(added, k.within, &fd, false)
	if deleted != "" {
		k.markers(deleted, nil, &fd, true)
	}
	// An example address (https://api.example.com/…) in a change that
	// orders nothing is documentation; in one that also instructs the
	// agent it is where the instruction may send things, whatever its name.
	if example != "" {
		if fd.has[Rank(Instruction)] {
			fd.note(Destination, example)
		} else {
			fd.note(Documentation, example)
		}
	}
	var r Result
	for i := len(Names) - 1; i >= 0; i-- {
		if fd.has[i] {
			r.Classes = append(r.Classes, Names[i])
			r.Evidence = append(r.Evidence, Evidence{Names[i], fd.text[i]})
		}
	}
	if len(r.Classes) == 0 {
		r.Classes = []string{Editorial}
	}
	return r
}

// ofRule is the class a scan finding gives, or "" for none (a low
// sensitive.secret, a long text).
func ofRule(r scan.Rule) string {
	switch r.Kind {
	case scan.KindInvisible, scan.KindBidi, scan.KindControl, scan.KindHomoglyph:
		return Concealment
	case scan.KindInstruction:
		if r.ID == "instruction.conceal" || r.ID == "instruction.covert_action" {
			return Concealment // told to hide from the person, or to act unseen (issue 38 round 6)
		}
		return Instruction
	case scan.KindTampering, scan.KindCommand:
		return Instruction
	case scan.KindShadowing:
		return CrossTool
	case scan.KindURL, scan.KindSensitive:
		if r.ID == "sensitive.secret" {
			return ""
		}
		return Destination
	case scan.KindExfiltration:
		if r.ID == "exfiltration.address" {
			return Destination
		}
		return Instruction
	case scan.KindHiddenText:
		if r.ID == "hidden.padding" || r.ID == "hidden.schema_value" {
			return Concealment
		}
	}
	return ""
}

// markers reads what the scan's rules leave to judgement: words that
// address the agent or order it (instruction), other tools or servers
// named in plain words (cross_tool), paths and account-like numbers
// (destination), and examples or parameter help (documentation). Of a
// deleted text (deleted), only instructions count.
func (k *Classifier) markers(t string, within []int, fd *found, deleted bool) {
	k.tokens = split(t, within, k.tokens[:0])
	words := k.tokens
	note := func(class, text string) {
		if !deleted || class == Instruction {
			fd.note(class, text)
		}
	}
	// sentence is the text of word i's sentence: what a person reads as the
	// evidence of an instruction or a reference.
	sentence := func(i int) string {
		lo, hi := i, i
		for lo > 0 && words[lo-1].sentence == words[i].sentence {
			lo--
		}
		for hi+1 < len(words) && words[hi+1].sentence == words[i].sentence {
			hi++
		}
		return t[words[lo].start:words[hi].end]
	}
	// Words are compared lower case through a buffer: a marker is short,
	// and a longer word is none of them.
	var lowBuf, nextBuf [16]byte
	// next is the word after word i in its sentence, lower case, or "":
	// asked only after "do" and "make", not lowered for every word.
	next := func(i int) string {
		if i+1 < len(words) && words[i+1].sentence == words[i].sentence {
			return lowerWord(&nextBuf, words[i+1].text)
		}
		return ""
	}
	for i, w := range words {
		lw := lowerWord(&lowBuf, w.text)
		switch lw {
		case "you", "your", "yourself", "assistant", "agent", "llm", "must", "always", "never", "ensure", "remember", "mandatory", "important", "should", "consider":
			note(Instruction, sentence(i))
		case "do", "dont", "don't":
			if lw != "do" || next(i) == "not" {
				note(Instruction, sentence(i))
			}
		case "make":
			if next(i) == "sure" {
				note(Instruction, sentence(i))
			}
		case "call", "invoke", "run", "execute", "send", "forward", "read", "pass", "include", "ignore", "delete", "write", "fetch", "upload", "share", "post", "copy", "email", "transfer", "open", "close", "remove", "replace", "modify",
			"use", "prefer", "avoid", "follow", "try", "check", "ask", "tell":
			switch {
			case !w.clauseStart || w.quoted:
			case (lw == "use" || lw == "set" || lw == "pass") && namesParameter(words, i):
				// "Use the 'head' parameter to read …": help with this
				// call's own parameters, not a directive beyond it.
				note(Documentation, sentence(i))
			default:
				note(Instruction, sentence(i))
			}
		case "other", "another":
			// "other tools", "other MongoDB tools": a tool word within two.
			for k := i + 1; k <= i+2 && k < len(words) && words[k].sentence == w.sentence; k++ {
				switch lowerWord(&nextBuf, words[k].text) {
				case "tool", "tools", "server", "servers", "function", "functions":
					note(CrossTool, sentence(i))
				}
			}
		case "e.g", "eg", "example", "examples", "instance", "default", "defaults", "format", "formats", "returns", "accepts", "optional", "args", "arguments", "parameter", "parameters", "values":
			note(Documentation, w.text)
		}
		if destinationToken(w.text) {
			note(Destination, w.text)
		}
	}
	if strings.IndexByte(t, '`') >= 0 {
		note(Documentation, "`")
	}
}

// lowerWord is w in lower case, as strings.ToLower has it, written into
// buf when w is ASCII: a word longer than buf is answered as it is (no
// marker is that long), and one with other characters through
// strings.ToLower (the Kelvin sign lowers to an ASCII k: "MA\u212AE" is
// "make").
func lowerWord(buf *[16]byte, w string) string {
	if len(w) > len(buf) {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return strings.ToLower(w)
		}
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return unsafeString(buf[:len(w)])
}

type token struct {
	text        string
	start, end  int // of the text, in bytes
	sentence    int
	clauseStart bool // the first word of a sentence, of a list item (after a lone -, *, •, – or —), or after , ; : ( or a dash, or after a first word then, also, first, please, kindly, and or so
	quoted      bool // the word opens with a quote or backtick: a value or name mentioned ("sitemap": "include"), not a verb used
}

// namesParameter says whether one of the three words after word i names
// a parameter: "Use the `head` parameter", "set the limit argument".
func namesParameter(words []token, i int) bool {
	var buf [16]byte
	for k := i + 1; k <= i+3 && k < len(words) && words[k].sentence == words[i].sentence; k++ {
		switch lowerWord(&buf, words[k].text) {
		case "parameter", "parameters", "argument", "arguments", "option", "options", "flag", "field":
			return true
		}
	}
	return false
}

// exampleAddress says whether a URL or e-mail address is at a name kept
// for examples and tests (RFC 2606, RFC 6761): example.com, .net and .org
// and their subdomains, and the .example, .test, .invalid and .localhost
// names. It goes nowhere: documentation, not a destination, unless the
// change also instructs the agent (classify).
func exampleAddress(span string) bool {
	host := span
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	} else if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 { // user info
		host = host[i+1:]
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 { // port
		host = host[:i]
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range []string{"example.com", "example.net", "example.org"} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	for _, tld := range []string{".example", ".test", ".invalid", ".localhost"} {
		if strings.HasSuffix(host, tld) {
			return true
		}
	}
	return false
}

// emojiPresentation says whether t[off:off+n] is one variation selector
// 15 or 16 (U+FE0E, U+FE0F) right after a symbol past U+2000: how an emoji
// or a dingbat asks for its text or picture form ("⚠️"), which hides
// nothing. A run of selectors, or one after a letter, stays concealment:
// that is how text is smuggled in selectors.
func emojiPresentation(t string, off, n int) bool {
	if n != 3 || off+n > len(t) || (t[off:off+n] != "\ufe0f" && t[off:off+n] != "\ufe0e") {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(t[:off])
	return r >= 0x2000 && r != utf8.RuneError && !(r >= 0xFE00 && r <= 0xFE0F)
}

// split cuts a text into blank-separated tokens (blanks as strings.Fields
// has them), their leading and trailing punctuation trimmed, numbering
// sentences as the scan does; appended to out.
func split(t string, within []int, out []token) []token {
	sentence, start := 0, true
	var lowBuf [16]byte
	for i := 0; i < len(t); {
		c, size := rune(t[i]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRuneInString(t[i:])
		}
		if isSpace(c) {
			i += size
			continue
		}
		fs := i
		for i < len(t) {
			// ASCII by a table: a token's bytes are mostly ASCII letters,
			// which need neither a rune's decoding nor isSpace's switch.
			if b := t[i]; b < utf8.RuneSelf {
				if asciiSpace[b] {
					break
				}
				i++
				continue
			}
			c, size := utf8.DecodeRuneInString(t[i:])
			if isSpace(c) {
				break
			}
			i += size
		}
		f := t[fs:i]
		ws, we := fs, i
		for ws < we && trimmed[t[ws]] {
			ws++
		}
		for we > ws && trimmed[t[we-1]] {
			we--
		}
		if len(within) > 0 && within[0] <= fs {
			if within[0] == fs {
				start = false // an insertion that continues a sentence
			}
			within = within[1:]
		}
		if ws < we && t[ws:we] == f && bullet(f) {
			start = true // a list item opens a clause, as a dash between clauses does
			continue
		}
		if ws < we {
			if n := len(out); n > 0 && !start && out[n-1].clauseStart && out[n-1].sentence == sentence {
				switch lowerWord(&lowBuf, out[n-1].text) {
				case "then", "also", "first", "please", "kindly", "and", "so":
					start = true
				}
			}
			if t[fs] == '(' {
				start = true // a parenthesis opens a clause: "(use scrape instead)"
			}
			q := t[fs] == '"' || t[fs] == '\'' || t[fs] == '`'
			out = append(out, token{t[ws:we], ws, we, sentence, start, q})
		}
		start = false
		switch f[len(f)-1] {
		case '.', '!', '?':
			sentence++
			start = true
		case ',', ';', ':':
			start = true
		}
	}
	return out
}

// isSpace is unicode.IsSpace (the White_Space property), which
// strings.Fields splits on, without the unicode tables.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return 0x2000 <= r && r <= 0x200A
}

// asciiSpace is isSpace of the ASCII characters, by byte.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// bullet says whether a blank-separated field is a list bullet or a dash
// between clauses: -, *, •, – or —.
func bullet(f string) bool {
	switch f {
	case "-", "*", "\u2022", "\u2013", "\u2014":
		return true
	}
	return false
}

// trimmed are the bytes split trims off a token's ends.
var trimmed = func() (t [256]bool) {
	for _, c := range []byte(".,;:!?()[]{}\"'*") {
		t[c] = true
	}
	return t
}()

// destinationToken says whether a token is a path (~/…, ./…, /a/b, C:\…)
// or an account-like number (nine digits or more, so that a date is not one, or 0x and twenty hex
// digits or more).
func destinationToken(w string) bool {
	switch {
	case strings.HasPrefix(w, "~/"), strings.HasPrefix(w, "./"), strings.HasPrefix(w, "../"):
		return true
	case len(w) > 3 && w[0] == '/' && strings.IndexByte(w[1:], '/') > 0:
		return true
	case len(w) > 3 && w[1] == ':' && w[2] == '\\':
		return true
	case strings.HasPrefix(w, "0x") && len(w) >= 22 && hexOnly(w[2:]):
		return true
	}
	digits := 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '-' || c == ' ':
		default:
			return false
		}
	}
	return digits >= 9
}

func hexOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// unsafeString is b as a string without a copy, for a comparison that
// ends before b is written again.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// clip keeps at most MaxEvidence bytes, cut on a character boundary.
func clip(s string) string {
	if len(s) <= MaxEvidence {
		return s
	}
	n := MaxEvidence
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Value is the result as the record and the lock check write it: the
// classes, strongest first, and their evidence.
func (r Result) Value() []canon.Member {
	ev := make([]canon.Value, len(r.Evidence))
	for i, e := range r.Evidence {
		ev[i] = canon.Obj(canon.M("class", canon.Str(e.Class)), canon.M("text", canon.Str(e.Text)))
	}
	return []canon.Member{
		canon.M("class_evidence", canon.Arr(ev...)),
		canon.M("classes", canon.Strs(r.Classes)),
	}
}
