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

// TestShapeObfuscated runs a stream of api.openai.com's deltas through one
// Shape: texts and obfuscation strings of every kind (those that end the
// string early, escape its quote, hold control characters, bad escapes or
// invalid UTF-8, or repeat the bytes between and after the two strings),
// and chunks that differ from the kept one outside the two strings.
func TestShapeObfuscated(t *testing.T) {
	var s rawjson.Shape
	kept := wireChunk(" world", "dBNii")
	middle := kept[strings.Index(kept, `"},"logprobs"`)+1 : strings.LastIndex(kept, `"dBNii"`)+1] // between the two strings' contents
	contents := []string{
		"", "x", "khkI7m07", `\"`, `a\\`, `a\`, `a\\\`, `a"b`, `"`, `""`, "\x01", "a\x1fb", "\x7f", `\u00e9`, `\ud800`, `\u00`, `\u00"`, `\q`,
		"\xff\xfe", "\xc3", "\xed\xa0\x80", `\n\t\/`, `"}`, `"} `, `","x":"`, middle, `"` + middle, `x` + middle + `y`, strings.Repeat("o", 900),
	}
	for _, text := range []string{" there", "", `\"quoted\"`, `a\`, `a"b`, "\x01", "\xff", middle, `"` + middle} {
		for _, obfuscation := range contents {
			checkShape(t, &s, []byte(kept))
			checkShape(t, &s, []byte(wireChunk(text, obfuscation)))
		}
	}
	other := wireChunk(" there", "Aw8Mh")
	for _, doc := range []string{
		strings.Replace(other, `"usage":null`, `"usage":nul`, 1), strings.Replace(other, `"created":1`, `"created":2`, 1),
		strings.Replace(other, `"usage":null`, `"usage":{}`, 1), strings.Replace(other, `"obfuscation"`, `"obfuscatioN"`, 1),
		strings.Replace(other, `,"obfuscation"`, `, "obfuscation"`, 1), strings.Replace(other, `"Aw8Mh"`, `7`, 1),
		strings.Replace(other, `"Aw8Mh"}`, `"Aw8Mh" }`, 1), strings.Replace(other, `"Aw8Mh"}`, `"Aw8Mh"}}`, 1),
		strings.Replace(other, `"Aw8Mh"}`, `"Aw8Mh"`, 1), strings.Replace(other, `"Aw8Mh"}`, `"Aw8Mh","x":"y"}`, 1),
		other + " ", other + "\n", other[:len(other)-2], other[1:],
	} {
		checkShape(t, &s, []byte(kept))
		checkShape(t, &s, []byte(doc))
	}
	for _, doc := range []string{ // in turn: each is checked after the one before
		`{"content":"a","model":"m","o":"x"}`, `{"content":"b","model":"m","o":"yy"}`, `{"content":"c","model":"m","o":"y"y"}`,
		`{"content":"d","model":"m","o":"z"}`, `{"content":"d","model":"m","o":yy}`, `{"content":"e","model":"m","o":"\\"}`,
		`{"content":"f","model":"m","o":"\\\"}`, `{"content":"g","model":"m","o":"\\\\"}`, `{"content":"h","model":"m","o":"a"} `,
		`{"content":"i","model":"m","usage":{},"o":"b"}`, `{"content":"j","model":"m","usage":{"n":1},"o":"c"}`,
		`{"o":"x","content":"a"}`, `{"o":"y","content":"b"}`, `{"content":"x"}`, `{"content":"y"}`, `{"content":"z" }`,
		`{"content":"a","model":"m","o":"x"}`, `{"content":"b","model":"n","o":"x"}`, `{"content":"a","o":"","model":"m","o":"x"}`,
		`{"content":"b","o":"q","model":"m","o":"yz"}`,
	} {
		checkShape(t, &s, []byte(doc))
	}
}

// TestShapeSplit runs api.openai.com's chunks of other shapes (role,
// finish, usage), which a Shape checks from the kept chunk's split (before
// "choices") when they begin as it does, each followed by broken forms of
// it: a break after the split, before it, and in the members' end.
func TestShapeSplit(t *testing.T) {
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_1",`
	role := head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"7tpD"}`
	text := head + `"choices":[{"index":0,"delta":{"content":"Tokyo"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"E1nb"}`
	finish := head + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}],"usage":null,"obfuscation":"vN"}`
	usage := head + `"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":12,"total_tokens":43},"obfuscation":"oGSr"}`
	broken := func(doc string) []string {
		return []string{
			// Cut at the split (while the doc is kept): a trailing comma,
			// though "{}" is valid.
			head + "}", head + " }",
			strings.Replace(doc, `"choices":[`, `"choices":[,`, 1), strings.Replace(doc, `"choices"`, `"choices" x`, 1),
			strings.Replace(doc, `"choices"`, `choices`, 1), strings.Replace(doc, `"created":1`, `"created":01`, 1),
			strings.TrimSuffix(doc, "}"), doc + "}", doc + ` `, strings.Replace(doc, `{"id"`, ` {"id"`, 1),
			strings.Replace(doc, `"choices"`, `"usage":{"total_tokens":1},"choices"`, 1),
			strings.Replace(doc, `,"choices"`, `, "choices"`, 1), strings.Replace(doc, `,"choices"`, `,"model":"x","choices"`, 1),
		}
	}
	var s rawjson.Shape
	for _, doc := range []string{role, text, text, finish, usage, text, usage, finish, finish} {
		checkShape(t, &s, []byte(doc))
		for _, bad := range broken(doc) {
			checkShape(t, &s, []byte(bad))
		}
	}
}

// FuzzShape checks a document with a Shape that has kept another (the
// first, when valid): it must say what ValidKeysScoped says of it alone.
func FuzzShape(f *testing.F) {
	for _, c := range []string{"", " world", `a\`, `a"`, "\x01", `\u12`, `\\`} {
		f.Add([]byte(shapeChunk("Hello")), []byte(shapeChunk(c)))
	}
	for _, c := range []string{"", "k", `a\`, `a"`, "\x01", "\xff", `\u12`, `\"`} {
		f.Add([]byte(wireChunk("Hello", "dBNii")), []byte(wireChunk(" world", c)))
		f.Add([]byte(wireChunk("Hello", "dBNii")), []byte(wireChunk(c, "khkI7m07")))
	}
	f.Add([]byte(wireChunk("Hello", "dBNii")), []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"total_tokens":3},"o":"x"}`))
	f.Add([]byte(wireChunk("Hello", "dBNii")), []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"delta":{}}],"usage":null}`))
	f.Add([]byte(`{"content":"a"}`), []byte(`{"content":"a"}`))
	f.Add([]byte(`{"content":"a","o":"b"}`), []byte(`{"content":"a","o":"b\""}`))
	f.Add([]byte(`{"content":"a","usage":{}}`), []byte(`{"content":"a\"","usage":{}}`))
	wire := []byte(wireChunk("Hello", "dBNii"))
	for _, cut := range []string{"}", " }"} { // a trailing comma at the split
		f.Add(wire, []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",`+cut))
	}
	f.Fuzz(func(t *testing.T, kept, b []byte) {
		var s rawjson.Shape
		checkShape(t, &s, kept)
		checkShape(t, &s, b)
		checkShape(t, &s, kept)
		// After a chat chunk: b, when it begins as that one, is checked
		// from its split; one with nothing to vary leaves the chunk kept.
		var w rawjson.Shape
		for _, doc := range [][]byte{wire, b, kept, b, wire} {
			checkShape(t, &w, doc)
		}
	})
}
