package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// yamlFormat writes YAML literals: a JSON string is a YAML double-quoted
// scalar, a JSON array of them a flow sequence. Each replaced span starts
// after its key's colon, so a literal is written after one blank.
type yamlFormat struct{ jsonFormat }

func (f yamlFormat) str(s string) string     { return " " + f.jsonFormat.str(s) }
func (f yamlFormat) list(ss []string) string { return " " + f.jsonFormat.list(ss) }
func (yamlFormat) newArgs(loc *location, list string) string {
	return loc.nl + loc.indent + "args:" + list
}

// members are the command and args members, one a line at the url
// member's indent. Continue passes over requestOptions in an entry it
// starts, so the headers stay there.
func (f yamlFormat) members(loc *location, command string, args, _ []string) string {
	return "command:" + f.str(command) + loc.nl + loc.indent + "args:" + f.list(args)
}

func (yamlFormat) stdio() string { return "stdio" }

// readYAML reads Continue's config.yaml (or a block file of
// .continue/mcpServers/): the mcpServers list, by yaml.v3, whose nodes
// answer their line and column.
func readYAML(f *File) error {
	f.format = yamlFormat{}
	var doc yaml.Node
	if err := yaml.Unmarshal(f.Data, &doc); err != nil {
		return fmt.Errorf("not YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return errors.New("is not a YAML mapping")
	}
	_, list := yamlMember(root, "mcpServers")
	if list == nil {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		return errors.New("mcpServers must be a list of servers (each with a name)")
	}
	lines := lineStarts(f.Data)
	for i, item := range list.Content {
		path := fmt.Sprintf("mcpServers[%d]", i)
		if item.Kind != yaml.MappingNode {
			return fmt.Errorf("%s must be a mapping", path)
		}
		e := &Entry{}
		var err error
		scalar := func(name string) string {
			_, v := yamlMember(item, name)
			if err != nil || v == nil {
				return ""
			}
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
				err = fmt.Errorf("%s.%s must be a string", path, name)
			}
			return v.Value
		}
		e.Name = scalar("name")
		e.Command = scalar("command")
		e.Cwd = scalar("cwd")
		e.URL = scalar("url")
		typ := scalar("type")
		if err != nil {
			return err
		}
		if e.Name == "" {
			return fmt.Errorf("%s has no name", path)
		}
		if e.URL != "" {
			e.Remote = "url"
			e.SSE = typ == "sse"
		}
		cmdKey, cmd := yamlMember(item, "command")
		argsKey, args := yamlMember(item, "args")
		if args != nil {
			if args.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s.args must be a list of strings", path)
			}
			e.Args = []string{}
			for _, a := range args.Content {
				if a.Kind != yaml.ScalarNode || a.ShortTag() != "!!str" {
					return fmt.Errorf("%s.args must be a list of strings", path)
				}
				e.Args = append(e.Args, a.Value)
			}
		}
		if e.Env, err = yamlStrMap(item, "env", path); err != nil {
			return err
		}
		if _, ro := yamlMember(item, "requestOptions"); ro != nil {
			if e.Headers, err = yamlStrMap(ro, "headers", path+".requestOptions"); err != nil {
				return err
			}
		}
		_, typNode := yamlMember(item, "type")
		typSpan := span{-1, -1}
		if typNode != nil {
			if off := offsetOf(f.Data, lines, typNode); off >= 0 {
				if end := tokenEnd(f.Data, off, typNode); end > off {
					typSpan = span{off, end}
				}
			}
		}
		urlKey, urlNode := yamlMember(item, "url")
		switch {
		case cmd != nil:
			if e.loc = yamlLocation(f.Data, lines, cmdKey, cmd, argsKey, args); e.loc != nil {
				e.loc.cmdKey, e.loc.remote, e.loc.typ = offsetOf(f.Data, lines, cmdKey), span{-1, -1}, typSpan
			}
		case urlNode != nil:
			// A remote entry: its url member, key to value, is what Wrap
			// replaces; one it cannot measure leaves it without a location.
			start := offsetOf(f.Data, lines, urlKey)
			if end := tokenEnd(f.Data, offsetOf(f.Data, lines, urlNode), urlNode); start >= 0 && end > start && urlKey.Style == 0 {
				e.loc = &location{command: span{-1, -1}, args: span{-1, -1}, first: -1, cmdKey: -1, remote: span{start, end}, typ: typSpan,
					indent: strings.Repeat(" ", urlKey.Column-1), nl: newline(f.Data)}
			}
		}
		f.Entries = append(f.Entries, e)
	}
	return nil
}

// blockItem is the prefix of a block sequence item's line: its indent, "-"
// and the blanks before the value.
var blockItem = regexp.MustCompile(`^[ \t]*-[ \t]+$`)

// yamlLocation is where the command and args values are: each span runs
// from after its key's colon to the end of its value's last token. Values
// this package cannot measure (block scalars, multi-line plain scalars,
// anchors) leave the entry without a location: Wrap refuses it.
func yamlLocation(data []byte, lines []int, cmdKey, cmd, argsKey, args *yaml.Node) *location {
	after := func(key *yaml.Node) int {
		end := tokenEnd(data, offsetOf(data, lines, key), key)
		if end < 0 {
			return -1
		}
		for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
			end++
		}
		if end < 0 || end >= len(data) || data[end] != ':' {
			return -1
		}
		return end + 1
	}
	cs, ce := after(cmdKey), tokenEnd(data, offsetOf(data, lines, cmd), cmd)
	if cs < 0 || ce < 0 {
		return nil
	}
	loc := &location{command: span{cs, ce}, args: span{-1, -1}, first: -1, insertAt: lineEnd(data, ce), nl: newline(data)}
	for i := 0; i < cmdKey.Column-1; i++ {
		loc.indent += " "
	}
	if args != nil {
		as := after(argsKey)
		var ae int
		if args.Style&yaml.FlowStyle != 0 {
			off := offsetOf(data, lines, args)
			ae = flowEnd(data, off)
			loc.first, loc.empty = off+1, len(args.Content) == 0
		} else if n := len(args.Content); n > 0 {
			last := args.Content[n-1]
			ae = tokenEnd(data, offsetOf(data, lines, last), last)
			// Items go in front of the first one, at its indent.
			if off := offsetOf(data, lines, args.Content[0]); off > 0 {
				start := bytes.LastIndexByte(data[:off], '\n') + 1
				if item := string(data[start:off]); blockItem.MatchString(item) {
					loc.first, loc.block = start, item
				}
			}
		}
		if as < 0 || ae <= 0 {
			return nil
		}
		loc.args = span{as, ae}
	}
	return loc
}

func yamlMember(m *yaml.Node, name string) (key, value *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			key, value = m.Content[i], m.Content[i+1]
		}
	}
	return key, value
}

func yamlStrMap(m *yaml.Node, name, path string) ([]KV, error) {
	_, v := yamlMember(m, name)
	if v == nil || v.ShortTag() == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s.%s must be a mapping of strings", path, name)
	}
	var out []KV
	for i := 0; i+1 < len(v.Content); i += 2 {
		val := v.Content[i+1]
		if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!str" {
			return nil, fmt.Errorf("%s.%s.%s must be a string", path, name, v.Content[i].Value)
		}
		out = append(out, KV{v.Content[i].Value, val.Value})
	}
	return out, nil
}

// lineStarts are the offsets where each line begins.
func lineStarts(data []byte) []int {
	out := []int{0}
	for i, c := range data {
		if c == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// offsetOf is the byte offset of a node's line and column (yaml.v3 counts
// columns in characters).
func offsetOf(data []byte, lines []int, n *yaml.Node) int {
	if n.Line < 1 || n.Line > len(lines) {
		return -1
	}
	off := lines[n.Line-1]
	for c := 1; c < n.Column && off < len(data); c++ {
		_, size := utf8.DecodeRune(data[off:])
		off += size
	}
	return off
}

// tokenEnd is the offset after a scalar's token starting at off: a quoted
// scalar's closing quote, a plain scalar's last non-blank before a comment
// or the line's end. -1 for what it cannot measure.
func tokenEnd(data []byte, off int, n *yaml.Node) int {
	if off < 0 || off >= len(data) || n.Kind != yaml.ScalarNode || n.Anchor != "" || n.Tag != "" && n.Style&yaml.TaggedStyle != 0 {
		return -1
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := off + 1; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := off + 1; i < len(data); i++ {
			if data[i] == '\'' {
				if i+1 < len(data) && data[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return -1
	default:
		// A plain scalar ends at a comment, at ": " (a key's), or with its line.
		end := lineEnd(data, off)
		for i := off; i < end; i++ {
			if data[i] == '#' && i > off && (data[i-1] == ' ' || data[i-1] == '\t') ||
				data[i] == ':' && (i+1 == end || data[i+1] == ' ' || data[i+1] == '\t') {
				end = i
				break
			}
		}
		for end > off && (data[end-1] == ' ' || data[end-1] == '\t') {
			end--
		}
		// A plain scalar folded over lines is not measured here.
		if string(data[off:end]) != n.Value {
			return -1
		}
		return end
	}
	return -1
}

// flowEnd is the offset after the "]" closing the flow sequence opened at
// off, quotes skipped.
func flowEnd(data []byte, off int) int {
	if off < 0 || off >= len(data) || data[off] != '[' {
		return -1
	}
	depth := 0
	var quote byte
	for i := off; i < len(data); i++ {
		c := data[i]
		switch {
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && i > 0 && (data[i-1] == ' ' || data[i-1] == '\t'):
			i = lineEnd(data, i)
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
