package gemini

import (
	"bytes"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Schemas. The canonical tool parameters and response schemas are JSON
// Schema. Gemini takes two spellings of a schema:
//
//   - "parameters" / "responseSchema": an OpenAPI 3.0 subset (upper- or
//     lower-case type names, "nullable", "propertyOrdering", "example",
//     int64 counts that proto JSON may quote); anything outside the subset
//     ("additionalProperties", "$ref", "const", type arrays…) is a 400.
//   - "parametersJsonSchema" / "responseJsonSchema": JSON Schema.
//
// The decoder accepts both and turns the OpenAPI form into JSON Schema
// (fromOpenAPI). The encoder always sends the JSON Schema form, lightly
// cleaned (toGemini): "$schema" and "$id" are removed, since Gemini rejects
// them, and a node with "$ref" keeps only "$ref", "description" and
// "default", the only siblings Gemini allows. Everything else goes as it is,
// so no constraint of the client's schema is lost on the way.
//
// The rewriter walks the schema's bytes and copies what it does not change,
// so key order (which Gemini follows when it generates JSON) is kept. It
// knows which members hold sub-schemas, so a property that happens to be
// named "$schema" or "type" is left alone.

type schemaMode uint8

const (
	toGemini    schemaMode = iota // canonical JSON Schema → parametersJsonSchema
	fromOpenAPI                   // Gemini's OpenAPI subset → JSON Schema
)

// maxSchemaDepth bounds the rewriter's recursion.
const maxSchemaDepth = 200

// appendSchema appends the schema v rewritten for mode. ok is false when v
// is not valid JSON or nests too deeply.
func appendSchema(dst, v []byte, mode schemaMode) (out []byte, ok bool) {
	v = bytes.TrimSpace(v)
	if !validObject(v) {
		return dst, false // canonical schemas come from other decoders: check
	}
	if mode == toGemini && !bytes.Contains(v, []byte(`"$`)) {
		if bytes.IndexByte(v, '\n') >= 0 {
			return appendCompact(dst, v), true
		}
		return append(dst, v...), true // nothing to clean: the common case
	}
	return rewriteSchema(dst, v, mode, 0)
}

// rewriteSchema appends the schema value v (an object, or a boolean schema).
func rewriteSchema(dst, v []byte, mode schemaMode, depth int) ([]byte, bool) {
	if depth > maxSchemaDepth {
		return dst, false
	}
	if len(v) == 0 || v[0] != '{' {
		if rawjson.ValueEnd(v, 0) != len(v) {
			return dst, false
		}
		return appendCompact(dst, v), true
	}
	var nullable, refOnly bool
	switch mode {
	case fromOpenAPI:
		if nv, found := member(v, "nullable"); found {
			nullable = string(nv) == "true"
		}
	case toGemini:
		_, refOnly = member(v, "$ref")
	}
	dst = append(dst, '{')
	n := 0 // members written
	it := members{b: v}
	for {
		key, val, more, ok := it.next()
		if !ok {
			return dst, false
		}
		if !more {
			break
		}
		start := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, '"', ':')
		var wrote bool
		dst, wrote, ok = rewriteMember(dst, key, val, mode, depth, nullable, refOnly)
		if !ok {
			return dst, false
		}
		if !wrote {
			dst = dst[:start]
			continue
		}
		n++
	}
	return append(dst, '}'), true
}

// rewriteMember appends the value of one schema keyword, or reports that the
// keyword is dropped (wrote false: the caller removes the key it wrote).
func rewriteMember(dst, key, val []byte, mode schemaMode, depth int, nullable, refOnly bool) (out []byte, wrote, ok bool) {
	k := rawjson.UnsafeString(key)
	if refOnly && k != "$ref" && k != "description" && k != "default" {
		return dst, false, true
	}
	switch k {
	case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas":
		dst, ok = rewriteSchemaMap(dst, val, mode, depth+1)
		return dst, true, ok
	case "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "additionalItems":
		if len(val) > 0 && val[0] == '[' { // draft-4 tuple "items"
			dst, ok = rewriteSchemaList(dst, val, mode, depth+1)
		} else {
			dst, ok = rewriteSchema(dst, val, mode, depth+1)
		}
		return dst, true, ok
	case "anyOf", "oneOf", "allOf", "prefixItems":
		dst, ok = rewriteSchemaList(dst, val, mode, depth+1)
		return dst, true, ok
	}
	if mode == toGemini {
		if k == "$schema" || k == "$id" {
			return dst, false, true
		}
		return appendCompact(dst, val), true, true
	}
	switch k {
	case "type":
		return appendOpenAPIType(dst, val, nullable)
	case "nullable", "propertyOrdering":
		return dst, false, true
	case "example": // OpenAPI's one example is JSON Schema's list of examples
		dst = dst[:len(dst)-len(`"example":`)]
		dst = append(dst, `"examples":[`...)
		dst = appendCompact(dst, val)
		return append(dst, ']'), true, true
	case "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties":
		// int64 fields, which proto JSON may write as strings.
		if len(val) > 2 && val[0] == '"' && allDigits(val[1:len(val)-1]) {
			return append(dst, val[1:len(val)-1]...), true, true
		}
	}
	return appendCompact(dst, val), true, true
}

// appendOpenAPIType appends an OpenAPI type name as JSON Schema's: lower
// case, and with "null" added when the node is nullable.
func appendOpenAPIType(dst, val []byte, nullable bool) ([]byte, bool, bool) {
	if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 {
		return append(dst, val...), true, true // not a plain name: leave it
	}
	name := val[1 : len(val)-1]
	if len(name) == 0 || string(bytes.ToUpper(name)) == "TYPE_UNSPECIFIED" {
		return dst, false, true // the caller drops the key
	}
	if nullable {
		dst = append(dst, '[')
	}
	dst = append(dst, '"')
	for _, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	dst = append(dst, '"')
	if nullable && string(bytes.ToLower(name)) != "null" {
		dst = append(dst, `,"null"]`...)
	} else if nullable {
		dst = append(dst, ']')
	}
	return dst, true, true
}

// rewriteSchemaMap appends an object whose values are schemas.
func rewriteSchemaMap(dst, v []byte, mode schemaMode, depth int) ([]byte, bool) {
	if len(v) == 0 || v[0] != '{' {
		return appendCompact(dst, v), rawjson.ValueEnd(v, 0) == len(v)
	}
	dst = append(dst, '{')
	it := members{b: v}
	for n := 0; ; n++ {
		key, val, more, ok := it.next()
		if !ok {
			return dst, false
		}
		if !more {
			break
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, '"', ':')
		if dst, ok = rewriteSchema(dst, val, mode, depth); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// rewriteSchemaList appends an array of schemas.
func rewriteSchemaList(dst, v []byte, mode schemaMode, depth int) ([]byte, bool) {
	if len(v) == 0 || v[0] != '[' {
		return rewriteSchema(dst, v, mode, depth)
	}
	dst = append(dst, '[')
	i := rawjson.SkipSpace(v, 1)
	for n := 0; ; n++ {
		if i < len(v) && v[i] == ']' && n == 0 {
			return append(dst, ']'), i == len(v)-1
		}
		end := rawjson.ValueEnd(v, i)
		if end < 0 {
			return dst, false
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = rewriteSchema(dst, v[i:end], mode, depth); !ok {
			return dst, false
		}
		i = rawjson.SkipSpace(v, end)
		if i >= len(v) {
			return dst, false
		}
		switch v[i] {
		case ',':
			i = rawjson.SkipSpace(v, i+1)
		case ']':
			return append(dst, ']'), i == len(v)-1
		default:
			return dst, false
		}
	}
}

// isEmptySchema reports whether a parameters schema declares no arguments
// ({} or an object type with no properties), so that the declaration can
// omit it: Gemini wants an object schema with properties, or none.
func isEmptySchema(v []byte) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return true
	}
	if v[0] != '{' {
		return false
	}
	it := members{b: v}
	for {
		if nonEmptyMember(&it) {
			return false // the common case, told before the value is framed
		}
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

// nonEmptyMember reports whether the next member of it is "properties" or
// "required" with a value that opens a non-empty object or array, for which
// isEmptySchema answers false whatever follows. It does not move it.
func nonEmptyMember(it *members) bool {
	b := it.b
	i := rawjson.SkipSpace(b, it.i)
	sep := byte(',') // before a member, but the first
	if !it.begun {
		sep = '{'
	}
	if i >= len(b) || b[i] != sep {
		return false
	}
	i = rawjson.SkipSpace(b, i+1)
	var open, close byte
	switch {
	case bytes.HasPrefix(b[i:], []byte(`"properties"`)):
		i += len(`"properties"`)
		open, close = '{', '}'
	case bytes.HasPrefix(b[i:], []byte(`"required"`)):
		i += len(`"required"`)
		open, close = '[', ']'
	default:
		return false
	}
	i = rawjson.SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	i = rawjson.SkipSpace(b, i+1)
	if i >= len(b) || b[i] != open {
		return false
	}
	i = rawjson.SkipSpace(b, i+1)
	return i < len(b) && b[i] != close
}

func isEmptyContainer(v []byte, open, close byte) bool {
	if len(v) < 2 || v[0] != open || v[len(v)-1] != close {
		return false
	}
	return len(bytes.TrimSpace(v[1:len(v)-1])) == 0
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
