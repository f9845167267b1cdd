package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A member is one "key":value pair of a compact JSON object, kept as the
// exact bytes it had, so that editing one member leaves every other byte of
// a tool (key order, escapes, duplicates) alone.
type member struct {
	key string // unescaped, for matching
	raw []byte // `"key":value` exactly as written
}

// members splits a compact JSON object into its members, in order.
func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		raw := bytes.TrimLeft(obj[start:dec.InputOffset()], ", \t\r\n")
		out = append(out, member{key: key, raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// editObject sets and unsets top-level members of a compact JSON object. A
// set member whose key exists replaces the first such member in place (its
// original key bytes are kept); a new one is appended. Every other member
// keeps its bytes and position.
func editObject(obj, set []byte, unset []string) ([]byte, error) {
	ms, err := members(obj)
	if err != nil {
		return nil, err
	}
	if set != nil {
		sets, err := members(set)
		if err != nil {
			return nil, err
		}
		for _, s := range sets {
			i := indexOf(ms, s.key)
			if i < 0 {
				ms = append(ms, s)
				continue
			}
			key, _ := splitMember(ms[i].raw)
			_, value := splitMember(s.raw)
			ms[i].raw = append(append(append([]byte{}, key...), ':'), value...)
		}
	}
	for _, k := range unset {
		for i := indexOf(ms, k); i >= 0; i = indexOf(ms, k) {
			ms = append(ms[:i], ms[i+1:]...)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.raw)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func indexOf(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

// splitMember splits a compact member `"key":value` into the key string's
// bytes and the value's bytes, honouring escapes in the key.
func splitMember(raw []byte) (key, value []byte) {
	i := 1
	for i < len(raw) && raw[i] != '"' {
		if raw[i] == '\\' {
			i++
		}
		i++
	}
	return raw[:i+1], raw[i+2:]
}

// toolName returns the name of a tool object, or "" if the tool is not an
// object or has no string name. Duplicate "name" keys resolve to the first.
func toolName(tool []byte) string {
	ms, err := members(tool)
	if err != nil {
		return ""
	}
	i := indexOf(ms, "name")
	if i < 0 {
		return ""
	}
	_, value := splitMember(ms[i].raw)
	var name string
	if json.Unmarshal(value, &name) != nil {
		return ""
	}
	return name
}
