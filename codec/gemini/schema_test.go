package gemini

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

func TestSchema(t *testing.T) {
	// f checks the schema in rewritten for mode ("" for refused).
	f := func(mode schemaMode, in, want string) {
		t.Helper()
		got, ok := appendSchema(nil, []byte(in), mode)
		if !ok {
			got = nil
		}
		if string(got) != want {
			t.Errorf("appendSchema(%d, %s) =\n%s, want\n%s", mode, in, got, want)
		}
	}
	// To Gemini: JSON Schema passes, minus what Gemini refuses.
	f(toGemini, `{"type":"object","properties":{"a":{"type":["string","null"],"const":"x"}},"additionalProperties":false}`,
		`{"type":"object","properties":{"a":{"type":["string","null"],"const":"x"}},"additionalProperties":false}`)
	f(toGemini, "{\n  \"type\": \"object\",\n  \"properties\": {\"a b\": {\"description\": \"x  y\"}}\n}",
		`{"type":"object","properties":{"a b":{"description":"x  y"}}}`)
	f(toGemini, `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","type":"object"}`, `{"type":"object"}`)
	f(toGemini, `{"properties":{"$schema":{"type":"string"},"$id":{"$id":"y","type":"string"}}}`,
		`{"properties":{"$schema":{"type":"string"},"$id":{"type":"string"}}}`)
	f(toGemini, `{"properties":{"a":{"$ref":"#/$defs/A","title":"A","description":"d","default":1,"type":"object"}},"$defs":{"A":{"$schema":"x","type":"string"}}}`,
		`{"properties":{"a":{"$ref":"#/$defs/A","description":"d","default":1}},"$defs":{"A":{"type":"string"}}}`)
	f(toGemini, `{"anyOf":[{"$id":"a"},true,{"items":[{"$id":"b","type":"string"}]}],"not":{"$schema":"s"}}`,
		`{"anyOf":[{},true,{"items":[{"type":"string"}]}],"not":{}}`)
	f(toGemini, `{"$schema":"x"}`, `{}`)
	f(toGemini, `true`, `true`)
	f(toGemini, `{"$schema":`, ``)
	f(toGemini, `{"type":"object"`, ``)
	f(toGemini, `{"a":1}x`, ``)

	// From Gemini's OpenAPI subset to JSON Schema.
	f(fromOpenAPI, `{"type":"OBJECT","properties":{"n":{"type":"INTEGER","nullable":true,"minimum":1},"s":{"type":"string","nullable":false,"example":"hi"}},"propertyOrdering":["n","s"]}`,
		`{"type":"object","properties":{"n":{"type":["integer","null"],"minimum":1},"s":{"type":"string","examples":["hi"]}}}`)
	f(fromOpenAPI, `{"type":"ARRAY","items":{"type":"NULL"},"minItems":"1","maxItems":"10","maxLength":"x"}`,
		`{"type":"array","items":{"type":"null"},"minItems":1,"maxItems":10,"maxLength":"x"}`)
	f(fromOpenAPI, `{"type":"NULL","nullable":true}`, `{"type":["null"]}`)
	f(fromOpenAPI, `{"type":"TYPE_UNSPECIFIED","description":"any"}`, `{"description":"any"}`)
	f(fromOpenAPI, `{"type":"","anyOf":[{"type":"STRING"},{"type":"NUMBER","format":"double"}]}`,
		`{"anyOf":[{"type":"string"},{"type":"number","format":"double"}]}`)
	f(fromOpenAPI, `{"properties":{"type":{"type":"STRING"},"nullable":{"type":"BOOLEAN"}}}`,
		`{"properties":{"type":{"type":"string"},"nullable":{"type":"boolean"}}}`)
	f(fromOpenAPI, `{"type":"STR\u0049NG"}`, `{"type":"STR\u0049NG"}`) // escaped: left alone
	f(fromOpenAPI, `{}`, `{}`)
	f(fromOpenAPI, `{"properties":[]}`, `{"properties":[]}`)
	f(fromOpenAPI, `{"anyOf":[{"type":"STRING"},]}`, ``)

	// Deep nesting is refused, not a stack overflow.
	deep := ""
	for range 300 {
		deep += `{"items":`
	}
	deep += `{}`
	for range 300 {
		deep += `}`
	}
	f(fromOpenAPI, deep, ``)
}

func TestEmptySchema(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := isEmptySchema([]byte(in)); got != want {
			t.Errorf("isEmptySchema(%s) = %v, want %v", in, got, want)
		}
	}
	f(``, true)
	f(`null`, true)
	f(`{}`, true)
	f(` { "type" : "object" , "properties" : { } } `, true)
	f(`{"type":"OBJECT","required":[],"additionalProperties":false,"$schema":"x","description":"d"}`, true)
	f(`{"type":"object","properties":{"a":{}}}`, false)
	f(`{"type":"string"}`, false)
	f(`{"anyOf":[]}`, false)
	f(`[]`, false)
	f(`{"type":`, false)
}

// isEmptySchema answers from the start of a non-empty "properties" or
// "required" without framing it; it must answer what framing every member
// answers.
func TestIsEmptySchemaShortcut(t *testing.T) {
	for _, c := range []struct {
		schema string
		want   bool
	}{
		{`{}`, true},
		{` { "type" : "object" , "properties" : { } , "required" : [ ] } `, true},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{`{"properties":{"a":{"type":"string"}},"type":"object"}`, false},
		{`{ "properties" : {"a":1}`, false},
		{`{"type":"object","required":["a"]}`, false},
		{`{"required":[ "a" ]}`, false},
		{`{"properties":{ },"required":[],"description":"d","title":"t","$schema":"s","additionalProperties":false}`, true},
		{`{"propert\u0069es":{}}`, false},
		{`{"properties":{}}}`, true}, // trailing bytes: appendSchema's validation refuses them
		{`{"properties":{}`, false},
		{`{"properties" {}}`, false},
		{`{"type":"string"}`, false},
		{`null`, true},
		{``, true},
		{`[]`, false},
	} {
		if got := isEmptySchema([]byte(c.schema)); got != c.want {
			t.Errorf("isEmptySchema(%s) = %v, want %v", c.schema, got, c.want)
		}
		if got := isEmptySchemaFramed([]byte(c.schema)); got != c.want {
			t.Errorf("isEmptySchemaFramed(%s) = %v, want %v", c.schema, got, c.want)
		}
	}
}

// isEmptySchemaFramed is isEmptySchema without the shortcut: every member
// framed.
func isEmptySchemaFramed(v []byte) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return true
	}
	if v[0] != '{' {
		return false
	}
	it := members{b: v}
	for {
		key, val, more, ok := it.next()
		if !ok {
			return false
		}
		if !more {
			return true
		}
		switch rawjson.UnsafeString(key) {
		case "type":
			if !bytes.EqualFold(val, []byte(`"object"`)) {
				return false
			}
		case "properties":
			if !isEmptyContainer(val, '{', '}') {
				return false
			}
		case "required":
			if !isEmptyContainer(val, '[', ']') {
				return false
			}
		case "$schema", "additionalProperties", "title", "description":
		default:
			return false
		}
	}
}

func FuzzIsEmptySchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`))
	f.Add([]byte(`{"properties":{ },"required":[],"description":"d"}`))
	f.Fuzz(func(t *testing.T, v []byte) {
		if got, want := isEmptySchema(v), isEmptySchemaFramed(v); got != want {
			t.Fatalf("isEmptySchema(%q) = %v, framing every member %v", v, got, want)
		}
	})
}

// validObject's fast acceptance must accept nothing validJSON refuses.
func FuzzValidObject(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","description":"é \" \\ \u00e9"}},"required":["a"]}`))
	f.Add([]byte(`{"a":[1,-2.5e+3,true,false,null,{},[]]}`))
	f.Add([]byte("{\"a\":\"tab\there\"}"))
	f.Add([]byte("{\f}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validObject(b), validJSON(b); got != want {
			t.Fatalf("validObject(%q) = %v, validJSON %v", b, got, want)
		}
	})
}

// Around sonic's depth limit (4095) and the parser's (10000).
func TestValidObjectDepth(t *testing.T) {
	for _, n := range []int{4095, 4096, 9999, 10000, 10001} {
		for _, b := range [][]byte{
			[]byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)),
			[]byte(`{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + "}"),
		} {
			if got, want := validObject(b), validJSON(b); got != want {
				t.Errorf("depth %d: validObject = %v, validJSON %v", n, got, want)
			}
		}
	}
}
