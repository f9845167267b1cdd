package core_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// TestSDKOps holds the SDKs' op layers to the op table: the JavaScript
// declarations (bindings/js/src/ops.d.ts: one request and one result
// interface per op, and the Core method of each), the Python op
// functions with TypedDict results (crawlcheck/ops.py) and the Go host's
// request and result types with their calls (internal/coreops/ops.go) are written from
// core.Specs() by go test ./core -update, as docs/abi.md is, and this test
// fails when any is stale. A hand-written copy drifted (five fields of
// the .d.ts, continuity_handoff's log in Python); a generated one cannot.
func TestSDKOps(t *testing.T) {
	specs := core.Specs()
	js, err := jsOps(specs)
	if err != nil {
		t.Fatal(err)
	}
	py, err := pyOps(specs)
	if err != nil {
		t.Fatal(err)
	}
	goSrc, err := goOps(specs)
	if err != nil {
		t.Fatal(err)
	}
	holdGenerated(t, "the SDK's op layer differs from core.Specs()", map[string]string{
		filepath.Join("..", "internal", "coreops", "ops.go"):                     goSrc,
		filepath.Join("..", "bindings", "js", "src", "ops.d.ts"):                 js,
		filepath.Join("..", "bindings", "python", "src", "crawlcheck", "ops.py"): py,
	})
}

// sdkType is how one Field.Type is written in each SDK, for a request
// member (what a caller may pass) and for a result member (what the core
// answers). A type the table does not know fails the test: a new wording in
// ops_spec.go must be given its SDK types here, never guessed.
type sdkType struct{ tsReq, tsRes, pyReq, pyRes string }

var sdkTypes = map[string]sdkType{
	"string":                    {"string", "string", "str", "str"},
	"string or null":            {"string | null", "string | null", "str", "Optional[str]"},
	"time":                      {"string", "string", "str", "str"},
	"bool":                      {"boolean", "boolean", "bool", "bool"},
	"bool or null":              {"boolean | null", "boolean | null", "bool", "Optional[bool]"},
	"number":                    {"number", "number", "int", "int"},
	"number or null":            {"number | null", "number | null", "int", "Optional[int]"},
	"document":                  {"Document", "string", "Document", "str"},
	"page string":               {"Page", "string", "Page", "str"},
	"array of page strings":     {"Page[]", "string[]", "Sequence[Page]", "List[str]"},
	"array of strings":          {"string[]", "string[]", "Sequence[str]", "List[str]"},
	"array of strings or null":  {"string[] | null", "string[] | null", "Optional[Sequence[str]]", "Optional[List[str]]"},
	"array of strings or nulls": {"(string | null)[]", "(string | null)[]", "Sequence[Optional[str]]", "List[Optional[str]]"},
	"array":                     {"RequestValue[]", "Json[]", "Sequence[JSON]", "List[JSON]"},
	"array or null":             {"RequestValue[] | null", "Json[] | null", "Optional[Sequence[JSON]]", "Optional[List[JSON]]"},
	"array of tool objects":     {"RequestValue[]", "Json[]", "Sequence[JSON]", "List[JSON]"},
	"array of documents":        {"Document[]", "string[]", "Sequence[Document]", "List[str]"},
	"object":                    {"Request", "{ [key: string]: Json }", "Mapping[str, Any]", "Dict[str, Any]"},
	"object or null":            {"Request | null", "{ [key: string]: Json } | null", "Mapping[str, Any]", "Optional[Dict[str, Any]]"},
	"any JSON":                  {"RequestValue", "Json", "JSON", "JSON"},
}

// typeOf finds a field's SDK types: by its whole Type, or, for a Type that
// spells its shape out (`array of {…}`, "object `{…}`", "object, as …"), by
// the words before the shape.
func typeOf(op string, f core.Field) (sdkType, error) {
	if f.Type == "string" && docFields[f.Name] {
		return sdkType{"string | Uint8Array", "string", "Union[str, bytes]", "str"}, nil
	}
	if s, ok := sdkTypes[f.Type]; ok {
		return s, nil
	}
	switch {
	case strings.HasPrefix(f.Type, "array of `{") && strings.HasSuffix(f.Type, "` or null"):
		return sdkTypes["array or null"], nil
	case strings.HasPrefix(f.Type, "array of `{"):
		return sdkTypes["array"], nil
	case strings.HasPrefix(f.Type, "object `{"), strings.HasPrefix(f.Type, "object, "):
		return sdkTypes["object"], nil
	}
	return sdkType{}, &unknownType{op, f.Name, f.Type}
}

// docFields are the request members docs/abi.md names as documents: a
// caller may give their exact bytes (a raw attachment), also where the
// field is declared a string (canonicalize's json, verify_chain's records,
// escape_text's text).
var docFields = map[string]bool{
	"pages": true, "lock": true, "into": true, "policy": true, "old": true, "new": true, "record": true,
	"records": true, "key_directory": true, "json": true, "receipt": true, "text": true,
}

type unknownType struct{ op, field, typ string }

func (e *unknownType) Error() string {
	return "core/sdk_ops_test.go: " + e.op + "." + e.field + " has the type " + e.typ + ", which sdkTypes does not map: add it"
}

// camel is an op or type name in camelCase (hash_tools → hashTools), as the
// JS SDK names its methods.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func pascal(s string) string {
	c := camel(s)
	return strings.ToUpper(c[:1]) + c[1:]
}

// wrap breaks text into lines of at most width bytes after prefix, at spaces.
func wrap(text, prefix string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(prefix)+len(line)+1+len(w) > width {
			lines = append(lines, prefix+line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, prefix+line)
	}
	return lines
}

// tsDoc is a JSDoc comment at indent; "*/" in the text is broken up.
func tsDoc(b *strings.Builder, indent, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	text = strings.ReplaceAll(text, "*/", "*\\/")
	lines := wrap(text, indent+" * ", 100)
	if len(lines) == 1 && len(lines[0])+3 <= 100 {
		b.WriteString(indent + "/** " + strings.TrimPrefix(lines[0], indent+" * ") + " */\n")
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.WriteString(indent + " */\n")
}

// tsMembers writes the members of an op's request or result interface, each
// with its doc, a ? when optional, and its type as form reads it of the
// field's sdkType (the request's or the result's).
func tsMembers(b *strings.Builder, op string, fields []core.Field, form func(sdkType) string) error {
	for _, f := range fields {
		ty, err := typeOf(op, f)
		if err != nil {
			return err
		}
		tsDoc(b, "  ", f.Doc)
		opt := ""
		if f.Optional {
			opt = "?"
		}
		b.WriteString("  " + f.Name + opt + ": " + form(ty) + ";\n")
	}
	return nil
}

func jsOps(specs []core.OpSpec) (string, error) {
	var b strings.Builder
	b.WriteString(`// Generated by go test ./core -update from core.Specs() (core/ops_spec.go); do not edit.
// The request and result of every op of docs/abi.md, and the Core method of each.

import type { Json, RawJSON, Request, RequestValue } from "./core.js";

/** A document: its text, its exact bytes, its JSON value, or JSON bytes placed as they are. */
export type Document = string | Uint8Array | RawJSON | Request | RequestValue[];
/** A tools/list page as received: its text, its exact bytes, or {base64} for bytes that are not UTF-8. */
export type Page = string | Uint8Array | RawJSON | { base64: string };
`)
	var methods, byName strings.Builder
	for _, s := range specs {
		name := pascal(s.Name)
		b.WriteString("\n")
		tsDoc(&b, "", "The request of "+s.Name+".")
		b.WriteString("export interface " + name + "Request {\n")
		if err := tsMembers(&b, s.Name, s.Request, func(ty sdkType) string { return ty.tsReq }); err != nil {
			return "", err
		}
		b.WriteString("}\n\n")
		tsDoc(&b, "", "The result of "+s.Name+".")
		b.WriteString("export interface " + name + "Result {\n")
		if err := tsMembers(&b, s.Name, s.Result, func(ty sdkType) string { return ty.tsRes }); err != nil {
			return "", err
		}
		b.WriteString("}\n")
		allOptional := !slices.ContainsFunc(s.Request, func(f core.Field) bool { return !f.Optional })
		tsDoc(&methods, "  ", s.Summary+" Throws CoreError with the core's code.")
		arg := "request: " + name + "Request"
		if allOptional {
			arg = "request?: " + name + "Request"
		}
		methods.WriteString("  " + camel(s.Name) + "(" + arg + "): " + name + "Result;\n")
		byName.WriteString("  " + s.Name + ": { request: " + name + "Request; result: " + name + "Result };\n")
	}
	b.WriteString("\n/** One method per op, named in camelCase: the methods of Core. */\nexport interface Ops {\n")
	b.WriteString(methods.String())
	b.WriteString("}\n")
	b.WriteString("\n/** Each op's request and result by the op's name, for Core.call. */\nexport interface OpTypes {\n")
	b.WriteString(byName.String())
	b.WriteString("}\n")
	return b.String(), nil
}

// pyDoc is a docstring body: backslashes and triple quotes escaped.
func pyText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `"""`, `\"\"\"`)
}

func pyOps(specs []core.OpSpec) (string, error) {
	var b strings.Builder
	b.WriteString(`"""One typed function per op of the core (docs/abi.md), and its result as a TypedDict.

Generated by go test ./core -update from core.Specs() (core/ops_spec.go); do not edit.

Each function takes the request's fields as keyword arguments and returns the op's
result (a dict); a field left at None is not sent. A document field (` + "``lock``, ``policy``,\n``pages`` elements, ``record``" + `...) takes a ` + "``str``" + ` (the document's text), ` + "``bytes``" + ` (its
exact bytes: a raw attachment with ABI 2) or a JSON value (a dict or list). The core decides
everything; these only name the fields.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, TypedDict, Union, cast

from ._core import call

#: A document: its text, its exact bytes, or the JSON value itself.
Document = Union[str, bytes, Mapping[str, Any], Sequence[Any]]
#: A tools/list page as received: its text or its exact bytes.
Page = Union[str, bytes, Mapping[str, Any]]
#: A JSON value.
JSON = Any


def _req(**fields: Any) -> Dict[str, Any]:
	return {k: v for k, v in fields.items() if v is not None}
`)
	for _, s := range specs {
		name := pascal(s.Name) + "Result"
		var required, optional []core.Field
		for _, f := range s.Result {
			if f.Optional {
				optional = append(optional, f)
			} else {
				required = append(required, f)
			}
		}
		field := func(f core.Field) error {
			ty, err := typeOf(s.Name, f)
			if err != nil {
				return err
			}
			for _, l := range wrap(f.Doc, "    #: ", 100) {
				b.WriteString(l + "\n")
			}
			b.WriteString("    " + f.Name + ": " + ty.pyRes + "\n")
			return nil
		}
		base := "TypedDict"
		if len(optional) > 0 {
			base = "_" + name + "Required"
			b.WriteString("\n\nclass " + base + "(TypedDict):\n")
			if len(required) == 0 {
				b.WriteString("    pass\n")
			}
			for _, f := range required {
				if err := field(f); err != nil {
					return "", err
				}
			}
		}
		b.WriteString("\n\nclass " + name + "(" + base)
		if len(optional) > 0 {
			b.WriteString(", total=False")
		}
		b.WriteString("):\n")
		b.WriteString("    \"\"\"The result of " + s.Name + ".\"\"\"\n")
		fs := required
		if len(optional) > 0 {
			fs = optional
		}
		for _, f := range fs {
			if err := field(f); err != nil {
				return "", err
			}
		}

		b.WriteString("\n\ndef " + s.Name + "(")
		if len(s.Request) > 0 {
			b.WriteString("\n    *,\n")
			for _, f := range s.Request {
				ty, err := typeOf(s.Name, f)
				if err != nil {
					return "", err
				}
				if f.Optional {
					b.WriteString("    " + f.Name + ": Optional[" + ty.pyReq + "] = None,\n")
				} else {
					b.WriteString("    " + f.Name + ": " + ty.pyReq + ",\n")
				}
			}
		}
		b.WriteString(") -> " + name + ":\n")
		doc := wrap(pyText(s.Summary), "    ", 97)
		if len(doc) == 1 {
			b.WriteString(`    """` + strings.TrimSpace(doc[0]) + `"""` + "\n")
		} else {
			b.WriteString(`    """` + strings.TrimSpace(doc[0]) + "\n")
			for _, l := range doc[1:] {
				b.WriteString(l + "\n")
			}
			b.WriteString(`    """` + "\n")
		}
		args := make([]string, len(s.Request))
		for i, f := range s.Request {
			args[i] = f.Name + "=" + f.Name
		}
		ret := "    return cast(" + name + ", call(" + `"` + s.Name + `", _req(` + strings.Join(args, ", ") + ")))"
		if len(ret) <= 100 {
			b.WriteString(ret + "\n")
		} else {
			b.WriteString("    return cast(\n        " + name + ",\n        call(\n            \"" + s.Name + "\",\n            _req(\n")
			for _, a := range args {
				b.WriteString("                " + a + ",\n")
			}
			b.WriteString("            ),\n        ),\n    )\n")
		}
	}
	return strings.ReplaceAll(b.String(), "\t", "    "), nil
}
