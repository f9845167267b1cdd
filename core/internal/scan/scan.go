package scan

import (
	"github.com/crawlcheck/verifier/core/internal/sorting"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// Finding is one match of one rule in one text of one tool.
type Finding struct {
	Rule   int    // index into Rules
	Tool   string // the tool's name
	Part   string // JSON Pointer into the tool object: /name, /description, /inputSchema/…, /annotations/…
	Key    bool   // the text is the member name at Part, not its value
	Offset int    // in bytes of the text's UTF-8
	Length int    // in bytes
	Span   string // the matched text, at most MaxSpan bytes of it
	Hidden string // for tag characters: the ASCII text they spell

	tool, seq int // for the order: the tool's rank, the text's rank in the tool
}

// Result is a scan of a tool list.
type Result struct {
	Severity Severity
	Kinds    map[string]int // kind → findings, counting those past MaxFindings
	Findings []Finding      // at most MaxFindings, the most severe kept
}

// Run scans the tools; when only is not nil, findings are kept for the
// tools it names alone (the others still count as names a text can refer to).
func Run(ts []tools.Tool, only map[string]bool) Result {
	return run(ts, only, Server{}).result()
}

// Server is what a server's handshake gives the model beside its tools.
type Server struct {
	Instructions    string // the initialize result's instructions
	HasInstructions bool
}

// RunServer scans the server's instructions, then the tools as Run does.
// Findings in the instructions have the tool "" and the part
// /instructions, and come first; only does not filter them.
func RunServer(ts []tools.Tool, only map[string]bool, srv Server) Result {
	return run(ts, only, srv).result()
}

// newScanner is a scanner for a list whose tools have these names.
func newScanner(names []string) *scanner {
	rules := rules()
	s := &scanner{c: rules, listNames: names, last: make([]int, len(Rules)), phraseEnd: make([]int, len(Rules))}
	for i := range s.last {
		s.last[i] = -1
	}
	s.foreign.names = names
	return s
}

// nameTables builds, on first need, the table of the names an identifier
// is looked up in (names, nameFilter): the scan of a whole list needs it,
// but the change classifier reads a few short insertions of a list of up
// to thousands of tools, most with no identifier in them, and building the
// maps of every name for each list was a tenth of its profile
// (docs/benchmarks.md, issue 38 round 7).
func (s *scanner) nameTables() {
	if s.namesBuilt {
		return
	}
	s.namesBuilt = true
	rules, names := s.c, s.listNames
	s.names = make(map[string]int, len(names)+len(rules.known))
	for n, rule := range rules.known {
		s.names[n] = rule
		s.nameFilter.put(n)
	}
	for _, name := range names {
		if identifierLike(name) && rules.listTool >= 0 {
			n := strings.ToLower(name)
			s.names[n] = rules.listTool
			s.nameFilter.put(n)
		}
	}
}

// ownTables builds, on first need, the tables of the list's own names
// (own, ownPart), which only the sentences that steer among tools and the
// calls with arguments read: most scans of a whole list never build them.
func (s *scanner) ownTables() {
	if s.ownBuilt {
		return
	}
	s.ownBuilt = true
	names := s.listNames
	s.own, s.ownPart = make(map[string]bool, len(names)), make(map[string]int, len(names))
	for _, name := range names {
		s.own[strings.ToLower(name)] = true
		nameParts(name, s.ownPart)
	}
}

// Texts scans lone texts of one list, each as the description of a tool
// of it (or of none: a server's instructions): what the change classes
// (core/internal/classify) read in the words a change added. The list's
// name tables are built once, so that classifying every tool of a list
// stays linear in it.
type Texts struct{ s *scanner }

// NewTexts is a Texts for a list whose tools have these names.
func NewTexts(names []string) *Texts { return &Texts{newScanner(names)} }

// Text answers the findings of one text as the description of the tool
// self ("" for none), in the order the passes found them (the order of the
// rules' passes, then of the text: the same in every build). The slice is
// the scanner's: it is valid until the next call.
func (x *Texts) Text(text, self string) []Finding {
	s := x.s
	// Only the rules of the last text's findings have a latest finding to
	// forget (add sets last for a finding it appends, nothing else does):
	// the whole table need not be cleared for every short text.
	for _, f := range s.found {
		s.last[f.Rule] = -1
	}
	s.found = s.found[:0]
	s.tool, s.toolName, s.selfLowered = 0, self, false
	s.schema, s.paramsRead = nil, false
	s.path = append(s.path[:0], "description")
	s.scanText(text, where{description: true}, nil)
	return s.found
}

func run(ts []tools.Tool, only map[string]bool, srv Server) *scanner {
	return runWith(ts, only, srv, newMemo(len(ts)))
}

// runWith is run with the memo given, or none when it is nil (a test
// compares the two).
func runWith(ts []tools.Tool, only map[string]bool, srv Server, m *memo) *scanner {
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	sorting.Func(order, func(a, b int) int { return canon.CompareKeys(ts[a].Name, ts[b].Name) })
	names := make([]string, len(ts))
	for i := range ts {
		names[i] = ts[i].Name
	}
	s := newScanner(names)
	s.memo = m
	if srv.HasInstructions {
		s.tool, s.toolName, s.selfLowered = -1, "", false
		s.schema, s.paramsRead = nil, false
		s.path = append(s.path[:0], "instructions")
		s.text(srv.Instructions, where{})
	}
	for rank, i := range order {
		t := &ts[i]
		if only != nil && !only[t.Name] {
			continue
		}
		s.tool, s.toolName, s.selfLowered = rank, t.Name, false
		s.schema, s.paramsRead = &t.InputSchema, false
		s.path = append(s.path[:0], "name")
		s.text(t.Name, where{name: true})
		if t.HasDescription {
			s.path[0] = "description"
			s.text(t.Description, where{description: true})
		}
		s.path[0] = "inputSchema"
		s.walk(&t.InputSchema, where{schema: true})
		s.path[0] = "annotations"
		s.walk(&t.Annotations, where{})
		s.members(t)
	}
	return s
}

// toolParams sets params to the names of the current tool's schema's
// top-level properties that are one word of letters (to, cc, city): in a
// clause of this tool's text, such a name is the argument the clause is
// about. It reads them on the first call for a tool (most tools have no
// clause that needs them), and sets nothing for a text of no tool.
func (s *scanner) toolParams() {
	s.toolRead = true
	if s.paramsRead {
		return
	}
	s.paramsRead = true
	if s.params == nil {
		s.params = map[string]bool{}
	}
	clear(s.params)
	s.paramFilter = wordFilter{}
	if s.schema == nil {
		return
	}
	props, ok := s.schema.Get("properties")
	if !ok || props.Kind() != canon.Object {
		return
	}
	for _, m := range props.Members() {
		if len(m.Key) < 2 || len(m.Key) > 24 {
			continue
		}
		word := true
		for i := 0; i < len(m.Key) && word; i++ {
			c := m.Key[i]
			word = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		}
		if word {
			k := strings.ToLower(m.Key)
			s.params[k] = true
			s.paramFilter.put(k)
		}
	}
}

// members scans what else of a tool a client or model reads (issue 21,
// the members the lockfile's coverage pins): title, outputSchema (as a
// schema), execution, _meta (ui apart, as the coverage has it) and every
// member the MCP schema does not name, each under its own pointer. Icons are
// not text: their sources are images.
func (s *scanner) members(t *tools.Tool) {
	for _, m := range [...]struct {
		member, key string
		w           where
	}{
		{tools.MemberTitle, "title", where{}},
		{tools.MemberOutputSchema, "outputSchema", where{schema: true}},
		{tools.MemberExecution, "execution", where{}},
		{tools.MemberMeta, "_meta", where{}},
	} {
		v := t.MemberValue(m.member)
		if v.IsNull() {
			continue
		}
		s.path = append(s.path[:0], m.key)
		s.walk(&v, m.w)
	}
	if ui := t.MemberValue(tools.MemberMetaUI); !ui.IsNull() {
		s.path = append(s.path[:0], "_meta", "ui")
		s.walk(&ui, where{})
	}
	if u := t.MemberValue(tools.MemberUnknown); !u.IsNull() {
		ms := u.Members()
		for i := range ms {
			s.path = append(s.path[:0], ms[i].Key)
			s.text(ms[i].Key, where{key: true})
			s.walk(&ms[i].Value, where{})
		}
	}
}

// where says what a text is, for the rules' In.
type where struct {
	name, description, key bool
	schema                 bool         // inside inputSchema
	value                  bool         // under default, examples, example, const or enum
	prose                  bool         // the value of a schema description or title
	names                  bool         // the object's member names are property names, not keywords
	dialect                bool         // a json-schema.org $schema value: a URL there is the norm
	typ                    bool         // the value of a schema's type (or an element of it)
	unknownRequired        bool         // an entry of a schema's required that names none of its properties
	props                  *canon.Value // for required: the object's properties, or nil
}

func (w where) applies(in string) bool {
	switch in {
	case InAny:
		return true
	case InName:
		return w.name
	case InText:
		return !w.name && !w.dialect
	case InDescription:
		return w.description
	case InSchemaValue:
		return w.value && !w.key
	case InSchemaDesc:
		return w.prose && !w.key
	}
	return false
}

// walk scans the member names and strings of a JSON value, members in
// canonical order (as parsed), so the findings do not depend on how the
// server ordered them. The path is a stack of reference tokens, turned into
// a JSON Pointer only for a finding.
func (s *scanner) walk(v *canon.Value, w where) {
	switch v.Kind() {
	case canon.String:
		str, _ := v.Str()
		if w.props != nil {
			_, declared := w.props.Get(str)
			w.unknownRequired = !declared
		}
		if schemaWord(str) && !w.unknownRequired {
			return
		}
		w.dialect = w.schema && s.path[len(s.path)-1] == "$schema" && isDialect(str)
		s.text(str, w)
	case canon.Array:
		elems := v.Elems()
		for i := range elems {
			if k := elems[i].Kind(); k != canon.String && k != canon.Array && k != canon.Object {
				continue // no text to scan, and no index to format: an enum of numbers can be millions long
			}
			s.path = append(s.path, strconv.Itoa(i))
			s.walk(&elems[i], where{schema: w.schema, value: w.value, typ: w.typ, props: w.props})
			s.path = s.path[:len(s.path)-1]
		}
	case canon.Object:
		ms := v.Members() // in canonical order: canon.Parse sorts every object it reads
		for i := range ms {
			m := &ms[i] // a member is large: copying it per iteration shows in the profile
			s.path = append(s.path, m.Key)
			if !schemaWord(m.Key) {
				s.text(m.Key, where{schema: w.schema, value: w.value, key: true})
			}
			child := where{schema: w.schema, value: w.value}
			if w.schema && !w.names && !w.value {
				switch m.Key {
				case "default", "examples", "example", "const", "enum":
					child.value = true
				case "description", "title":
					child.prose = true
				case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
					child.names = true
				case "type":
					child.typ = true
				case "required":
					if p, ok := v.Get("properties"); ok && p.Kind() == canon.Object {
						child.props = &p
					}
				}
			}
			s.walk(&m.Value, child)
			s.path = s.path[:len(s.path)-1]
		}
	}
}

// schemaWord says whether a text of the schema or annotations is a JSON
// Schema keyword, type name or MCP annotation hint, in which no rule can
// find anything: most member names are, and skipping them keeps the scan's
// cost a fraction of make_lock's.
//
// Not inlined: the switch is large, and walk asks it in two places.
//
//go:noinline
func schemaWord(s string) bool {
	switch s {
	case "type", "description", "properties", "required", "items", "enum", "default", "title",
		"minimum", "maximum", "format", "additionalProperties", "anyOf", "oneOf", "allOf", "not",
		"const", "pattern", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
		"examples", "$ref", "$defs", "$id", "$schema", "exclusiveMinimum", "exclusiveMaximum",
		"multipleOf", "nullable", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint",
		"string", "object", "integer", "number", "boolean", "array", "null":
		return true
	}
	return false
}

// isDialect says whether a $schema value is one of JSON Schema's own
// dialect URLs.
func isDialect(s string) bool {
	for _, p := range []string{"http://json-schema.org/", "https://json-schema.org/"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return !strings.ContainsAny(rest, " \t\n<>\"'")
		}
	}
	return false
}

// pointer is the current path as a JSON Pointer (RFC 6901).
func (s *scanner) pointer() string {
	var b strings.Builder
	for _, k := range s.path {
		b.WriteByte('/')
		if strings.ContainsAny(k, "~/") {
			k = strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
		}
		b.WriteString(k)
	}
	return b.String()
}

// nameParts counts the words of a tool name of four letters or more, lower
// case, split on _, -, . and camelCase, "tool" and "tools" aside, once per
// name: the family names a server calls its own tools by ("page" of
// list_pages and new_page).
//
// A name's words are told apart by a short list, and by a map only past
// eight of them: a map made for every name of a list showed in the change
// classifier's profile, which builds these tables for every list it reads.
func nameParts(name string, into map[string]int) {
	start := 0
	var few [8]string // the words counted for this name, the first eight
	n := 0
	var more map[string]bool // past eight
	for i := 0; i <= len(name); i++ {
		end := i == len(name) || !isAlnum(name[i]) || i > start && 'A' <= name[i] && name[i] <= 'Z' && 'a' <= name[i-1] && name[i-1] <= 'z'
		if !end {
			continue
		}
		if w := strings.ToLower(name[start:i]); len(w) >= 4 && w != "tool" && w != "tools" && !counted(few[:n], more, w) {
			if n < len(few) {
				few[n] = w
				n++
			} else {
				if more == nil {
					more = map[string]bool{}
				}
				more[w] = true
			}
			into[w]++
		}
		start = i
		if i < len(name) && !isAlnum(name[i]) {
			start = i + 1
		}
	}
}

// counted says whether w is among few or in more.
func counted(few []string, more map[string]bool, w string) bool {
	for _, x := range few {
		if x == w {
			return true
		}
	}
	return more[w]
}

// identifierLike says whether a tool name reads as an identifier rather
// than a word: only those are looked for in other tools' text, since a
// plain word ("fetch", "search") is mostly just the word.
func identifierLike(name string) bool {
	if len(name) < 3 {
		return false
	}
	marked := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9':
			marked = true
		case 'A' <= c && c <= 'Z':
			if i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z' {
				marked = true
			}
		case 'a' <= c && c <= 'z':
		default:
			return false
		}
	}
	return marked
}

type scanner struct {
	c           *compiled
	listNames   []string       // the list's tool names, as the list spells them
	namesBuilt  bool           // nameTables built names and nameFilter
	ownBuilt    bool           // ownTables built own and ownPart
	names       map[string]int // lower case tool name → rule: the list's identifier-like names, then well-known ones
	nameFilter  wordFilter     // what names certainly lacks
	tool        int
	toolName    string
	seq         int
	found       []Finding
	last        []int  // rule → its latest finding, or -1 (of the current text if its seq is)
	self        string // the current tool's name, lower case, once selfName made it
	selfLowered bool   // self is toolName's
	phraseEnd   []int  // rule → end of its latest phrase match in the current text, in words
	phraseHit   []int  // the rules phraseEnd holds an end for
	work        int    // steps taken, one per byte and one per look-around step: the fuzz target holds it linear
	words       []word
	hits        []acHit  // the literal automaton's end states in the current text
	path        []string // reference tokens of the current text
	low         []byte   // the words of the current text, lower case
	seen        uint8    // what splitWords noted of the current text for the passes after it (seenLT, …)
	ident       []byte   // the identifier being looked up, lower case
	ptr         string   // the current text's JSON Pointer, once a finding needed it
	ptrSeq      int      // the text ptr is of
	cur, nxt    []int
	own         map[string]bool // every tool name of the list, lower case
	params      map[string]bool // the current tool's one-word parameter names, lower case: what the directive rule reads as roles
	paramFilter wordFilter      // what params certainly lacks
	schema      *canon.Value    // the current tool's inputSchema, read into params on first need
	paramsRead  bool            // params holds the names of schema
	ownPart     map[string]int  // how many of the list's names have each word of four letters or more (split on _, -, . and camelCase), "tool" and "tools" aside
	ownSentence int             // the sentence ownAnswer is of, or -1
	ownAnswer   bool
	refSeq      int // the text refLo:refHi, the sentence refusing read last, is of
	refLo       int
	refHi       int
	refAnswer   bool
	foreign     foreignState // the foreign_tool matcher's names (foreign.go)
	memo        *memo        // the findings of texts seen before in this scan (memo.go), or nil
	toolRead    bool         // a pass of the current text read its tool's name or parameters: the memo must not keep it
}

// selfName is the current tool's name in lower case, made on first need:
// most texts are of no rule that compares a name with it, and lowering it
// for every text was 6% of the change classifier's profile.
func (s *scanner) selfName() string {
	if !s.selfLowered {
		s.self, s.selfLowered = strings.ToLower(s.toolName), true
	}
	return s.self
}

// add records a match of rule in the current text, merging it into the
// previous finding of the same rule in that text when they overlap.
func (s *scanner) add(rule int, w where, text string, start, end int) {
	if i := s.last[rule]; i >= 0 && s.found[i].seq == s.seq {
		f := &s.found[i]
		if start <= f.Offset+f.Length && end >= f.Offset {
			lo, hi := min(start, f.Offset), max(end, f.Offset+f.Length)
			f.Offset, f.Length, f.Span = lo, hi-lo, clipSpan(text[lo:hi])
			if rule == s.c.tagRule {
				f.Hidden = decodeTags(text[lo:hi])
			}
			return
		}
	}
	s.last[rule] = len(s.found)
	if s.ptrSeq != s.seq { // one pointer per text, however many findings it has
		s.ptr, s.ptrSeq = s.pointer(), s.seq
	}
	f := Finding{Rule: rule, Tool: s.toolName, Part: s.ptr, Key: w.key,
		Offset: start, Length: end - start, Span: clipSpan(text[start:end]), tool: s.tool, seq: s.seq}
	if rule == s.c.tagRule {
		f.Hidden = decodeTags(text[start:end])
	}
	s.found = append(s.found, f)
}

// clipSpan keeps at most MaxSpan bytes, cut on a character boundary.
func clipSpan(s string) string {
	if len(s) <= MaxSpan {
		return s
	}
	n := MaxSpan
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func (s *scanner) result() Result {
	res := Result{Kinds: map[string]int{}}
	for _, f := range s.found {
		r := Rules[f.Rule]
		res.Kinds[r.Kind]++
		res.Severity = max(res.Severity, r.Severity)
	}
	// Sorted through an index: one sort instantiation for a struct this
	// size costs the wasm build tens of kilobytes.
	byPlace := func(a, b *Finding) int {
		if c := a.tool - b.tool; c != 0 {
			return c
		}
		if c := a.seq - b.seq; c != 0 {
			return c
		}
		if c := a.Offset - b.Offset; c != 0 {
			return c
		}
		if c := a.Rule - b.Rule; c != 0 {
			return c
		}
		return a.Length - b.Length
	}
	order := make([]int, len(s.found))
	for i := range order {
		order[i] = i
	}
	if len(order) > MaxFindings {
		sorting.Func(order, func(i, j int) int {
			a, b := &s.found[i], &s.found[j]
			if c := Rules[b.Rule].Severity - Rules[a.Rule].Severity; c != 0 {
				return int(c)
			}
			return byPlace(a, b)
		})
		order = order[:MaxFindings]
	}
	sorting.Func(order, func(i, j int) int { return byPlace(&s.found[i], &s.found[j]) })
	fs := make([]Finding, len(order))
	for k, i := range order {
		fs[k] = s.found[i]
	}
	res.Findings = fs
	return res
}

// decodeTags spells the printable ASCII a run of tag characters stands
// for (each tag character U+E0020–U+E007E is its ASCII character plus
// U+E0000), at most MaxSpan characters of it.
func decodeTags(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() == MaxSpan {
			break
		}
		if r >= 0xE0020 && r <= 0xE007E {
			b.WriteByte(byte(r - 0xE0000))
		}
	}
	return b.String()
}

// Value is the scan as the scan_at_approval member of a lockfile:
// {findings, kinds, rules_sha256, severity}.
func (r Result) Value() canon.Value {
	kinds := make([]string, 0, len(r.Kinds))
	for k := range r.Kinds {
		kinds = append(kinds, k)
	}
	sorting.Func(kinds, canon.CompareKeys)
	km := make([]canon.Member, len(kinds))
	for i, k := range kinds {
		km[i] = canon.M(k, canon.Int(int64(r.Kinds[k])))
	}
	fs := make([]canon.Value, len(r.Findings))
	for i, f := range r.Findings {
		rule := Rules[f.Rule]
		var ms []canon.Member
		if f.Hidden != "" {
			ms = append(ms, canon.M("hidden", canon.Str(f.Hidden)))
		}
		ms = append(ms,
			canon.M("key", canon.BoolOf(f.Key)),
			canon.M("kind", canon.Str(rule.Kind)),
			canon.M("length", canon.Int(int64(f.Length))),
			canon.M("offset", canon.Int(int64(f.Offset))),
			canon.M("part", canon.Str(f.Part)),
			canon.M("rule", canon.Str(rule.ID)),
			canon.M("severity", canon.Str(rule.Severity.String())),
			canon.M("span", canon.Str(f.Span)),
			canon.M("tool", canon.Str(f.Tool)),
		)
		fs[i] = canon.Obj(ms...)
	}
	// Members in canonical order, as a parsed lockfile holds them, so a
	// lockfile read and written again is byte-identical.
	return canon.Obj(
		canon.M("findings", canon.Arr(fs...)),
		canon.M("kinds", canon.Obj(km...)),
		canon.M("rules_sha256", canon.Str(RulesSHA256())),
		canon.M("severity", canon.Str(r.Severity.String())),
	)
}
