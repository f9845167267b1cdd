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
// to another tool). Its tables are built once for the list.
type Classifier struct{ texts *scan.Texts }

// New is a Classifier for a list whose tools have these names.
func New(names []string) *Classifier { return &Classifier{scan.NewTexts(names)} }

// Change classifies a changed text from its word diff. self is the tool
// whose text it is ("" for instructions).
func (k *Classifier) Change(segs []Segment, self string) Result {
	var ins, del []string
	for _, s := range segs {
		switch s.Op {
		case "insert":
			ins = append(ins, s.Text)
		case "delete":
			del = append(del, s.Text)
		}
	}
	// Insertions are read apart, as sentences of their own: a phrase never
	// joins words the diff put in different places.
	return k.classify(strings.Join(ins, ".\n"), strings.Join(del, ".\n"), self)
}

// Whole classifies a text whose previous version is unknown: all of it is
// read as inserted.
func (k *Classifier) Whole(text, self string) Result {
	return k.classify(text, "", self)
}

func (k *Classifier) classify(added, deleted, self string) Result {
	found := map[string]string{}
	note := func(class, text string) {
		if _, ok := found[class]; !ok {
			found[class] = clip(text)
		}
	}
	for _, f := range k.texts.Text(added, self) {
		if c := ofRule(scan.Rules[f.Rule]); c != "" {
			note(c, f.Span)
		}
		if scan.Rules[f.Rule].ID == "exfiltration.send" {
			note(Destination, f.Span)
		}
	}
	if deleted != "" {
		for _, f := range k.texts.Text(deleted, self) {
			if c := ofRule(scan.Rules[f.Rule]); c == Instruction || c == Concealment {
				note(c, f.Span)
			}
		}
	}
	markers(added, note)
	if deleted != "" {
		markers(deleted, func(class, text string) {
			if class == Instruction {
				note(class, text)
			}
		})
	}
	var r Result
	for i := len(Names) - 1; i >= 0; i-- {
		if text, ok := found[Names[i]]; ok {
			r.Classes = append(r.Classes, Names[i])
			r.Evidence = append(r.Evidence, Evidence{Names[i], text})
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
		if r.ID == "instruction.conceal" {
			return Concealment
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
// (destination), and examples or parameter help (documentation).
func markers(t string, note func(class, text string)) {
	words := split(t)
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
	for i, w := range words {
		lw := strings.ToLower(w.text)
		next := ""
		if i+1 < len(words) && words[i+1].sentence == w.sentence {
			next = strings.ToLower(words[i+1].text)
		}
		switch lw {
		case "you", "your", "yourself", "assistant", "agent", "llm", "must", "always", "never", "ensure", "remember", "mandatory", "important", "should", "consider":
			note(Instruction, sentence(i))
		case "do", "dont", "don't":
			if lw != "do" || next == "not" {
				note(Instruction, sentence(i))
			}
		case "make":
			if next == "sure" {
				note(Instruction, sentence(i))
			}
		case "call", "invoke", "run", "execute", "send", "forward", "read", "pass", "include", "ignore", "delete", "write", "fetch", "upload", "share", "post", "copy", "email", "transfer", "open", "close", "remove", "replace", "modify",
			"use", "prefer", "avoid", "follow", "try", "check", "ask", "tell":
			if w.clauseStart {
				note(Instruction, sentence(i))
			}
		case "other", "another":
			// "other tools", "other MongoDB tools": a tool word within two.
			for k := i + 1; k <= i+2 && k < len(words) && words[k].sentence == w.sentence; k++ {
				switch strings.ToLower(words[k].text) {
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

type token struct {
	text        string
	start, end  int // of the text, in bytes
	sentence    int
	clauseStart bool // the first word of a sentence or after , ; :, or after a first word then, also, first, please, kindly, and or so
}

// split cuts a text into blank-separated tokens, their trailing
// punctuation trimmed, numbering sentences as the scan does.
func split(t string) []token {
	var out []token
	sentence, start := 0, true
	at := 0
	for _, f := range strings.Fields(t) {
		fs := at + strings.Index(t[at:], f)
		at = fs + len(f)
		w := strings.Trim(f, ".,;:!?()[]{}\"'*")
		ws := fs + strings.Index(f, w)
		if w != "" {
			if n := len(out); n > 0 && !start && out[n-1].clauseStart && out[n-1].sentence == sentence {
				switch strings.ToLower(out[n-1].text) {
				case "then", "also", "first", "please", "kindly", "and", "so":
					start = true
				}
			}
			out = append(out, token{w, ws, ws + len(w), sentence, start})
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
