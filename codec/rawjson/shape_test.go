package rawjson_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// shapeKeys are what the Shape tests look for: the varying string's key
// first, then keys found anywhere and at the top level (shapeTop).
var shapeKeys = []string{"content", "model", "usage", "choices"}

const shapeTop = 1<<2 | 1<<3

// shapeChunk is a text delta of a chat stream with content in its text.
func shapeChunk(content string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` +
		content + `"},"logprobs":null,"finish_reason":null}],"usage":null}`
}

// wireChunk is a text delta as api.openai.com sends it: shapeChunk with an
// obfuscation string last, whose length varies from chunk to chunk.
func wireChunk(content, obfuscation string) string {
	return strings.TrimSuffix(shapeChunk(content), "}") + `,"obfuscation":"` + obfuscation + `"}`
}

// checkShape checks b with s, and holds what it says to ValidKeysScoped
// and encoding/json.Valid.
func checkShape(t *testing.T, s *rawjson.Shape, b []byte) {
	t.Helper()
	got, want := make([]int, len(shapeKeys)), make([]int, len(shapeKeys))
	ok := s.ValidKeys(b, shapeKeys, got, shapeTop)
	if wantOK := rawjson.ValidKeysScoped(b, shapeKeys, want, shapeTop); ok != wantOK || ok != json.Valid(b) {
		t.Fatalf("Shape.ValidKeys(%q) = %v; ValidKeysScoped %v, encoding/json %v", b, ok, wantOK, json.Valid(b))
	}
	if ok && !slices.Equal(got, want) {
		t.Fatalf("Shape.ValidKeys(%q) found %v; ValidKeysScoped %v", b, got, want)
	}
}

// TestShape runs a stream through one Shape: deltas of the kept shape with
// contents of every kind (those that end the string early, escape its
// quote or are not string contents among them), and chunks of other
// shapes between them.
func TestShape(t *testing.T) {
	var s rawjson.Shape
	for _, content := range []string{
		"", " world", "Hello", `\"quoted\"`, `a\\`, `a\`, `a\\\`, `a"b`, `a"`, `"`, "\x01", "a\x1fb", `\u00e9`, `\u00`, `\u00"`, `\q`,
		`","usage":{"prompt_tokens":1},"x":"`, `"},"model":"n","x":{"y":"`, strings.Repeat("long ", 300), "\xff\xfe", "tab\there", `\n\t\/`,
	} {
		checkShape(t, &s, []byte(shapeChunk(" world"))) // keeps the shape
		checkShape(t, &s, []byte(shapeChunk(content)))
	}
	for _, doc := range []string{
		`{"choices":[],"usage":{"prompt_tokens":3},"model":"m"}`, // a usage chunk: another shape
		shapeChunk("x") + " ", shapeChunk("x")[1:], shapeChunk("x") + "}", `{"content":"a","model":"m"}`, `{"content":"b","model":"m"}`,
		`{"content":"b","model":"m"`, `{"content":"","model":"m"}`, `{"content":1,"model":"m"}`, `{"content":"c","model":"m"}`, ``, `{`,
		`{"content":"` + strings.Repeat("x", 2000) + `","model":"m"}`, `{"content":"y","model":"m"}`,
	} {
		checkShape(t, &s, []byte(doc))
	}
	s.Reset()
	checkShape(t, &s, []byte(shapeChunk("after a reset")))
}

// FuzzShape checks a document with a Shape that has kept another (the
// first, when valid): it must say what ValidKeysScoped says of it alone.
func FuzzShape(f *testing.F) {
	for _, c := range []string{"", " world", `a\`, `a"`, "\x01", `\u12`, `\\`} {
		f.Add([]byte(shapeChunk("Hello")), []byte(shapeChunk(c)))
	}
	f.Add([]byte(`{"content":"a"}`), []byte(`{"content":"a"}`))
	f.Add([]byte(`{"content":"a","usage":{}}`), []byte(`{"content":"a\"","usage":{}}`))
	f.Fuzz(func(t *testing.T, kept, b []byte) {
		var s rawjson.Shape
		checkShape(t, &s, kept)
		checkShape(t, &s, b)
		checkShape(t, &s, kept)
	})
}
