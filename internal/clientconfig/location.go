package clientconfig

import (
	"bytes"
	"strings"
)

// span is a byte range [start, end) of a config file.
type span struct{ start, end int }

// location is where an entry's command and args literals are in its file:
// the only bytes Wrap and Unwrap change.
type location struct {
	command span
	// args is the args value; start < 0 when the entry has none.
	args span
	// first is where the args' elements begin, the gateway's words go in
	// front of them and the elements stay as written, comments and all:
	// after the "[" of a flow array, or at the start of the line of a
	// YAML block sequence's first item (block is then that item's prefix,
	// its indent and "- "). -1 when args is not a list crawlcheck edits;
	// empty when it has no element.
	first int
	empty bool
	block string
	// insertAt is where an args member goes when the entry has none, and
	// indent the line prefix it is written with (TOML and YAML).
	insertAt int
	indent   string
	nl       string
	// cmdKey is where the command member begins (its name), -1 without
	// one; remote is a remote entry's url member (name to value) and typ
	// its type value, start -1 when there is none.
	cmdKey int
	remote span
	typ    span
	// TOML only: off are the key-values a wrapped remote entry cannot
	// keep (Codex refuses bearer_token_env_var, http_headers and
	// env_http_headers beside a command), which install comments out;
	// region is the entry's table, where uninstall finds them again;
	// hand that one of them is written in a form not edited here (a
	// sub-table, a dotted key, a value over several lines).
	off    []span
	region span
	hand   bool
}

// format writes the literals of a file format.
type format interface {
	// str is a string literal.
	str(s string) string
	// list is an array of string literals, on one line.
	list(ss []string) string
	// newArgs is the text inserted at loc.insertAt that gives an entry
	// without args the args list.
	newArgs(loc *location, list string) string
	// members are the command and args members that take a remote
	// entry's url member's place, and (TOML) env_vars, the variables
	// Codex passes on to a server it starts.
	members(loc *location, command string, args, envVars []string) string
	// stdio is the type value of an entry the client starts.
	stdio() string
}

// prefix is the text inserted at loc.first: the gateway's words as string
// literals (a JSON string is a TOML basic string and a YAML double-quoted
// scalar), each a line of its own in a YAML block sequence.
func prefix(loc *location, words []string) string {
	var b strings.Builder
	for i, w := range words {
		lit := jsonFormat{}.str(w)
		switch {
		case loc.block != "":
			b.WriteString(loc.block + lit + loc.nl)
		case i < len(words)-1 || !loc.empty:
			b.WriteString(lit + ", ")
		default:
			b.WriteString(lit)
		}
	}
	return b.String()
}

// lineEnd is the offset of the end of the line holding offset i (before
// its "\r\n" or "\n").
func lineEnd(data []byte, i int) int {
	j := bytes.IndexByte(data[i:], '\n')
	if j < 0 {
		return len(data)
	}
	j += i
	if j > i && data[j-1] == '\r' {
		j--
	}
	return j
}

// lineIndent is the leading blanks of the line holding offset i.
func lineIndent(data []byte, i int) string {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	k := start
	for k < len(data) && (data[k] == ' ' || data[k] == '\t') {
		k++
	}
	return string(data[start:k])
}

// newline is the file's line ending: "\r\n" when it uses it.
func newline(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}
