package scan

import (
	"strconv"
	"strings"
	"sync"
)

// compiled is the rule table turned into matchers, once, on the first scan:
// not at start-up, which every call in a fresh process (a Node one-shot)
// would pay although only make_lock and scan need it (issue 9).
type compiled struct {
	chars          []charRange     // sorted by lo
	ac             *automaton      // literal and url rules
	tags           map[string]int  // tag name → rule
	phrases        []phrase        // phrase rules
	byFirst        wordTable       // first word of a phrase → phrases
	known          map[string]int  // well-known tool name (lower case) → rule
	listTool       int             // the list_tool rule, or -1
	tagRule        int             // the rule whose findings decode tag characters (invisible.tag), or -1
	escape         int             // the escape rule, or -1
	loneCR         int             // the lone_cr rule, or -1
	email          int             // the email rule, or -1
	nonASCII       int             // the non_ascii rule, or -1
	mixed          []mixedRule     // mixed_script rules
	spaceRun       []spaceRule     // space_run rules
	bracket        int             // the bracket rule, or -1
	bracketWord    map[string]bool // its words
	comment        int             // the comment rule, or -1
	typeProse      int             // the type_prose rule, or -1
	required       int             // the required rule, or -1
	sendTo         int             // the send_to rule, or -1
	sendWord       map[string]bool // its words
	contrast       int             // the contrast rule, or -1
	contrastOf     map[string]bool // its words
	callTool       int             // the call_tool rule, or -1
	callVerb       map[string]bool // its verbs
	callName       map[string]bool // its name words
	ownTools       int             // the own_tools rule, or -1
	refusedOf      map[int]int     // literal rule → the refused rule that takes its matches in a refusing sentence
	refusedWord    map[string]bool // the refused rule's words
	ownLowers      []bool          // rule → the own_tools rule takes its matches in sentences naming only this list's tools
	length         []numRule       // length rules
	isURL          map[int]bool    // rules whose literal matches extend over an address
	directive      *directiveRule  // the directive rule, or nil
	callSyntax     int             // the call_syntax rule, or -1
	callSyntaxVerb map[string]bool // its verbs
	foreign        *foreignRule    // the foreign_tool rule, or nil (foreign.go)
}

type charRange struct {
	lo, hi rune
	rule   int
}

type numRule struct{ rule, n int }

type mixedRule struct{ rule, minLetters int }

// spaceRule: a blank run with n blanks on one line, or lines line breaks.
type spaceRule struct{ rule, n, lines int }

var rules = sync.OnceValue(func() *compiled { return compile(Rules) })

func compile(rs []Rule) *compiled {
	c := &compiled{tags: map[string]int{}, known: map[string]int{},
		listTool: -1, tagRule: -1, escape: -1, loneCR: -1, email: -1, nonASCII: -1, isURL: map[int]bool{},
		bracket: -1, comment: -1, ownTools: -1, ownLowers: make([]bool, len(rs)), refusedOf: map[int]int{}, refusedWord: map[string]bool{}, typeProse: -1, required: -1, sendTo: -1, callTool: -1, callSyntax: -1, callSyntaxVerb: map[string]bool{}, contrast: -1, contrastOf: map[string]bool{},
		bracketWord: map[string]bool{}, sendWord: map[string]bool{}, callVerb: map[string]bool{}, callName: map[string]bool{}}
	var lits []literal
	byFirst := map[string][]int{}
	var firsts []string // in the order first seen, so the table is the same in every build
	for i, r := range rs {
		switch r.Match {
		case MatchChars:
			if r.ID == "invisible.tag" {
				c.tagRule = i
			}
			for _, a := range r.Args {
				lo, hi, ok := strings.Cut(a, "-")
				if !ok {
					hi = lo
				}
				c.chars = append(c.chars, charRange{codePoint(lo), codePoint(hi), i})
			}
		case MatchLiteral, MatchURL:
			for _, a := range r.Args {
				lits = append(lits, newLiteral(a, i))
			}
			c.isURL[i] = r.Match == MatchURL
		case MatchTag:
			for _, a := range r.Args {
				c.tags[a] = i
			}
		case MatchPhrase:
			for _, a := range r.Args {
				p := parsePhrase(a, i)
				c.phrases = append(c.phrases, p)
				for _, w := range p.steps[0].words {
					if _, ok := byFirst[w]; !ok {
						firsts = append(firsts, w)
					}
					byFirst[w] = append(byFirst[w], len(c.phrases)-1)
				}
			}
		case MatchKnownTool:
			for _, a := range r.Args {
				c.known[strings.ToLower(a)] = i
			}
		case MatchListTool:
			c.listTool = i
		case MatchEscape:
			c.escape = i
		case MatchLoneCR:
			c.loneCR = i
		case MatchEmail:
			c.email = i
		case MatchNonASCII:
			c.nonASCII = i
		case MatchMixedScript:
			c.mixed = append(c.mixed, mixedRule{i, number(r.Args[0])})
		case MatchSpaceRun:
			c.spaceRun = append(c.spaceRun, spaceRule{i, number(r.Args[0]), number(r.Args[1])})
		case MatchBracket:
			c.bracket = i
			for _, a := range r.Args {
				c.bracketWord[a] = true
			}
		case MatchComment:
			c.comment = i
		case MatchTypeProse:
			c.typeProse = i
		case MatchRequired:
			c.required = i
		case MatchSendTo:
			c.sendTo = i
			for _, a := range r.Args {
				c.sendWord[a] = true
			}
		case MatchContrast:
			c.contrast = i
			for _, a := range r.Args {
				c.contrastOf[a] = true
			}
		case MatchCallTool:
			c.callTool = i
			words := c.callVerb
			for _, a := range r.Args {
				if a == "|" {
					words = c.callName
					continue
				}
				words[a] = true
			}
		case MatchLength:
			c.length = append(c.length, numRule{i, number(r.Args[0])})
		case MatchRefused:
			j := ruleIndex(rs, r.Args[0])
			if j < 0 || rs[j].Match != MatchLiteral {
				panic("scan: rule " + r.ID + " names " + r.Args[0] + ", not a literal rule")
			}
			c.refusedOf[j] = i
			for _, a := range r.Args[1:] {
				c.refusedWord[a] = true
			}
		case MatchCallSyntax:
			c.callSyntax = i
			for _, a := range r.Args {
				c.callSyntaxVerb[a] = true
			}
		case MatchDirective:
			c.directive = directiveGroups(i, r.Args)
		case MatchForeignTool:
			c.foreign = foreignGroups(i, r.Args)
		case MatchForeignRoute:
			routeGroups(c.foreign, i, r.Args)
		case MatchOwnTools:
			c.ownTools = i
			for _, a := range r.Args {
				j := ruleIndex(rs, a)
				if j < 0 || rs[j].Match != MatchPhrase {
					panic("scan: rule " + r.ID + " names " + a + ", not a phrase rule")
				}
				c.ownLowers[j] = true
			}
		default:
			panic("scan: rule " + r.ID + " names unknown matcher " + r.Match)
		}
	}
	for i := 1; i < len(c.chars); i++ { // insertion sort: a few dozen ranges, once
		for j := i; j > 0 && c.chars[j].lo < c.chars[j-1].lo; j-- {
			c.chars[j], c.chars[j-1] = c.chars[j-1], c.chars[j]
		}
	}
	for i := 1; i < len(c.chars); i++ {
		if c.chars[i].lo <= c.chars[i-1].hi {
			panic("scan: character ranges overlap at U+" + strconv.FormatInt(int64(c.chars[i].lo), 16))
		}
	}
	c.ac = newAutomaton(lits)
	c.byFirst = newWordTable(firsts, byFirst, c.phrases)
	return c
}

func ruleIndex(rs []Rule, id string) int {
	for i, r := range rs {
		if r.ID == id {
			return i
		}
	}
	return -1
}

// codePoint reads "U+XXXX"; the table is code, so a typo panics at start-up
// (and in every test).
func codePoint(s string) rune {
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "U+"), 16, 32)
	if err != nil || !strings.HasPrefix(s, "U+") {
		panic("scan: bad code point " + s)
	}
	return rune(n)
}

func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		panic("scan: bad number " + s)
	}
	return n
}

// charRule returns the rule of a character, or -1.
func (c *compiled) charRule(r rune) int {
	lo, hi := 0, len(c.chars)
	for lo < hi {
		m := (lo + hi) / 2
		switch cr := &c.chars[m]; {
		case cr.hi < r:
			lo = m + 1
		case cr.lo > r:
			hi = m
		default:
			return cr.rule
		}
	}
	return -1
}

// A phrase is a sequence of word steps; each step may follow the one before
// it after up to gap other words. Written "a|b ~2 c|d*": a or b, then within
// two words c, or a word starting with d.
type phrase struct {
	rule  int
	steps []step
}

type step struct {
	gap      int
	words    []string
	prefixes []string
	hashed   [2]uint64 // a bit per word of words, by its hash (hashBit): a word whose bit is clear is none of them
}

// hashBit is the bit of step.hashed a word of this hash (wordHash) sets: a
// step is tried on the words after its phrase's first, most of which are
// none of its words; the bit says so without comparing them to each.
func hashBit(h uint32) (int, uint64) { return int(h >> 31), 1 << (h >> 25 & 63) }

// maxGap bounds a phrase's gaps, so that matching stays linear.
const maxGap = 8

func parsePhrase(s string, rule int) phrase {
	p := phrase{rule: rule}
	gap := 0
	for _, tok := range strings.Fields(s) {
		if g, ok := strings.CutPrefix(tok, "~"); ok {
			n, err := strconv.Atoi(g)
			if gap = n; err != nil || n < 0 || n > maxGap {
				panic("scan: bad phrase gap in " + s)
			}
			continue
		}
		st := step{gap: gap}
		for _, alt := range strings.Split(tok, "|") {
			if w, ok := strings.CutSuffix(alt, "*"); ok {
				st.prefixes = append(st.prefixes, w)
			} else {
				st.words = append(st.words, alt)
				i, bit := hashBit(wordHash(alt))
				st.hashed[i] |= bit
			}
		}
		p.steps = append(p.steps, st)
		gap = 0
	}
	if len(p.steps) == 0 || len(p.steps[0].prefixes) > 0 {
		panic("scan: a phrase must start with whole words: " + s)
	}
	return p
}

// match says whether the word w (lower case, of hash h) is one of the
// step's words or starts with one of its prefixes.
func (st *step) match(w []byte, h uint32) bool {
	if i, bit := hashBit(h); st.hashed[i]&bit != 0 {
		for _, x := range st.words {
			if string(w) == x {
				return true
			}
		}
	}
	for _, x := range st.prefixes {
		if len(w) >= len(x) && string(w[:len(x)]) == x {
			return true
		}
	}
	return false
}

// wordFilter answers "certainly not one of the words put" from a word's
// length, first and last letters (lower case), sparing a map lookup for
// most words of a text.
type wordFilter [16][2]uint64 // [length mod 16] → bit per first byte mod 64, bit per last byte mod 64

func (f *wordFilter) put(w string) {
	f[len(w)%16][0] |= 1 << (w[0] % 64)
	f[len(w)%16][1] |= 1 << (w[len(w)-1] % 64)
}

func (f *wordFilter) has(first, last byte, n int) bool {
	e := &f[n%16]
	return e[0]&(1<<(first%64)) != 0 && e[1]&(1<<(last%64)) != 0
}

// wordTable maps a lower-case word to the phrases it starts, looked up by
// the hash splitWords computes as it lowers each word (wordHash): one probe
// of an open-addressed table a quarter full answers most words of a text,
// without hashing them again as a map lookup would.
//
// Each slot's hash is also in keys (shifted, with a low bit that marks the
// slot used), so that a word that starts no phrase, most words, is answered
// from an array of eight bytes a slot instead of the 80-byte slots.
type wordTable struct {
	mask  uint32
	keys  []uint64 // hash<<1 | 1 of a used slot, 0 of an empty one
	slots []wordSlot
}

type wordSlot struct {
	hash    uint32
	word    string
	phrases []int // nil: an empty slot
	// What the second steps of these phrases ask of the words after this
	// one: a bit per word of theirs by its hash (step.hashed's), within
	// gap+1 words. Most words a phrase starts with are common ("it",
	// "the"), and most of the time no word after them can be a second
	// step's: phrasesIn then tries none of the phrases. open is set when
	// a second step has prefixes, or a phrase is one word: those are
	// tried whatever follows.
	second [2]uint64
	gap    int
	open   bool
}

const (
	hashSeed  = 2166136261 // FNV-1a, 32 bits
	hashPrime = 16777619
)

// wordHash is the hash splitWords gives a word of these lower-case bytes.
func wordHash(w string) uint32 {
	h := uint32(hashSeed)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * hashPrime
	}
	return h
}

func newWordTable(words []string, of map[string][]int, phrases []phrase) wordTable {
	n := uint32(8)
	for n < 4*uint32(len(words)) {
		n *= 2
	}
	t := wordTable{mask: n - 1, keys: make([]uint64, n), slots: make([]wordSlot, n)}
	for _, w := range words {
		h := wordHash(w)
		i := h & t.mask
		for t.slots[i].phrases != nil {
			i = (i + 1) & t.mask
		}
		sl := wordSlot{hash: h, word: w, phrases: of[w]}
		for _, pi := range sl.phrases {
			p := &phrases[pi]
			if len(p.steps) < 2 || len(p.steps[1].prefixes) > 0 {
				sl.open = true
				continue
			}
			sl.second[0] |= p.steps[1].hashed[0]
			sl.second[1] |= p.steps[1].hashed[1]
			sl.gap = max(sl.gap, p.steps[1].gap)
		}
		t.slots[i] = sl
		t.keys[i] = uint64(h)<<1 | 1
	}
	return t
}

// get is the slot of the word w (lower case, of hash h), or nil when it
// starts no phrase.
func (t *wordTable) get(h uint32, w []byte) *wordSlot {
	key := uint64(h)<<1 | 1
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		k := t.keys[i]
		if k == 0 {
			return nil
		}
		if k == key && t.slots[i].word == string(w) {
			return &t.slots[i]
		}
	}
}
