package rawjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

func TestLookup(t *testing.T) {
	// f looks up the keys in want, which alternates keys and their expected value spans ("" for
	// an absent key), with all both false and true.
	f := func(input string, want ...string) {
		t.Helper()
		var fields []rawjson.Field
		for i := 0; i < len(want); i += 2 {
			fields = append(fields, rawjson.Field{Key: want[i], Start: 7, End: 7}) // Lookup must reset stale spans
		}
		for _, all := range []bool{false, true} {
			if err := rawjson.Lookup([]byte(input), fields, all); err != nil {
				t.Fatalf("Lookup(%q, all=%v): %v", input, all, err)
			}
			for i, fl := range fields {
				got := ""
				if fl.Start >= 0 {
					got = input[fl.Start:fl.End]
				} else if fl.Start != -1 || fl.End != -1 {
					t.Fatalf("Lookup(%q, all=%v): %q at [%d:%d], want [-1:-1]", input, all, fl.Key, fl.Start, fl.End)
				}
				if got != want[2*i+1] {
					t.Fatalf("Lookup(%q, all=%v): %q = %q, want %q", input, all, fl.Key, got, want[2*i+1])
				}
			}
		}
	}
	// Key order.
	f(`{"model":"gpt-4o","stream":true}`, "model", `"gpt-4o"`, "stream", `true`)
	f(`{"model":"gpt-4o","stream":true}`, "stream", `true`, "model", `"gpt-4o"`)
	f(`{"stream":true,"model":"gpt-4o"}`, "model", `"gpt-4o"`, "stream", `true`)
	f(`{"a":1,"model":"m","b":2}`, "model", `"m"`)

	// Absent keys.
	f(`{}`, "model", ``)
	f(`{"stream":true}`, "model", ``, "stream", `true`)
	f(`{"Model":"x","MODEL":"y","model ":"z"," model":"w"}`, "model", ``)
	f(`{"model":"x"}`, "mod", ``, "models", ``, "", ``)
	f(`{"":1}`, "", `1`)

	// The same key names inside values do not match.
	f(`{"metadata":{"model":"inner"},"model":"outer"}`, "model", `"outer"`)
	f(`{"tools":[{"model":"a"},{"model":"b"}],"model":"outer"}`, "model", `"outer"`)
	f(`{"messages":[{"content":"\"model\":\"evil\""}],"model":"ok"}`, "model", `"ok"`)
	f(`{"a":{"b":{"c":[{"model":1}]}}}`, "model", ``)
	f(`{"a":["model","model"],"model":2}`, "model", `2`)

	// Escapes in keys are decoded before comparing.
	f(`{"mod\u0065l":"x"}`, "model", `"x"`)
	f(`{"\u006D\u006F\u0064\u0065\u006C":"x"}`, "model", `"x"`)
	f(`{"a\/b":1,"a\\b":2,"a\"b":3}`, "a/b", `1`, `a\b`, `2`, `a"b`, `3`)
	f(`{"tab\tkey":1,"nl\nkey":2}`, "tab\tkey", `1`, "nl\nkey", `2`)
	f(`{"model\u0000":1}`, "model", ``, "model\x00", `1`)
	f(`{"mode\u006c2":1}`, "model", ``, "model2", `1`)
	f(`{"mo\u0064":1}`, "model", ``, "mod", `1`)
	f(`{"x\u00e9":1}`, "xé", `1`)
	f(`{"\ud83d\ude00":1}`, "😀", `1`)
	f(`{"\ud83d":1}`, "\uFFFD", `1`)
	f(`{"`+strings.Repeat(`\u0061`, 200)+`":1}`, strings.Repeat("a", 200), `1`, strings.Repeat("a", 199), ``)

	// Escapes and brackets inside strings.
	f(`{"a":"a\\\"]}","model":1}`, "a", `"a\\\"]}"`, "model", `1`)
	f(`{"a":"\\","model":1}`, "a", `"\\"`, "model", `1`)
	f(`{"a":"\\\\","model":1}`, "model", `1`)
	f(`{"a":"\"","model":"\"}"}`, "model", `"\"}"`)
	f(`{"a":"x\\\\\"y","model":1}`, "model", `1`)
	f(`{"a":"]]]}}}","model":1}`, "model", `1`)
	f(`{"a":"http:\/\/x\/y","model":"m\/n"}`, "model", `"m\/n"`)

	// Whitespace.
	f(`{"model" : "x"}`, "model", `"x"`)
	f(" \t\r\n{ \"model\" \n:\t\"x\" ,\r\n\"stream\":true } \n", "model", `"x"`, "stream", `true`)
	f(`{ }`, "model", ``)
	f(`{"a":[ 1 , { "b" : [ ] } ] ,"model":1}`, "a", `[ 1 , { "b" : [ ] } ]`, "model", `1`)

	// Every kind of value.
	f(`{"s":"x","n":-1.5e+3,"o":{"a":1},"a":[1,"2",null],"t":true,"f":false,"z":null}`,
		"s", `"x"`, "n", `-1.5e+3`, "o", `{"a":1}`, "a", `[1,"2",null]`, "t", `true`, "f", `false`, "z", `null`)
	f(`{"a":0,"b":-0,"c":0.5,"d":1E9,"e":12e-07,"f":123}`, "a", `0`, "b", `-0`, "c", `0.5`, "d", `1E9`, "e", `12e-07`, "f", `123`)
	f(`{"o":{},"a":[],"e":""}`, "o", `{}`, "a", `[]`, "e", `""`)
	f(`{"deep":[[[{"a":[{}]}]]],"model":1}`, "deep", `[[[{"a":[{}]}]]]`, "model", `1`)

	// Unicode.
	f(`{"modèle":"ünï","model":"qwen-指令 🙂"}`, "modèle", `"ünï"`, "model", `"qwen-指令 🙂"`)
	f(`{"😀":"\ud83d\ude00"}`, "😀", `"\ud83d\ude00"`)

	// Strings are not validated (that is sonic.Valid's job): control characters pass.
	f("{\"a\":\"x\x01\ty\",\"model\":1}", "model", `1`)
}

func TestLookupError(t *testing.T) {
	// f checks that Lookup with all == true rejects input with a *SyntaxError at offset, and that
	// with all == false it does not panic.
	f := func(input string, offset int, msg string) {
		t.Helper()
		fields := []rawjson.Field{{Key: "model"}, {Key: "messages"}}
		_ = rawjson.Lookup([]byte(input), fields, false)
		err := rawjson.Lookup([]byte(input), fields, true)
		var se *rawjson.SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Lookup(%q) = %v, want a *SyntaxError", input, err)
		}
		if se.Offset != offset || se.Msg != msg {
			t.Fatalf("Lookup(%q): offset %d: %s; want offset %d: %s", input, se.Offset, se.Msg, offset, msg)
		}
	}
	// Not an object.
	f(``, 0, "unexpected end of input")
	f(`  `, 2, "unexpected end of input")
	f(`[]`, 0, "want a JSON object")
	f(`"model"`, 0, "want a JSON object")
	f(`null`, 0, "want a JSON object")
	f(`1`, 0, "want a JSON object")
	f(`}`, 0, "want a JSON object")

	// Broken top level.
	f(`{`, 1, "unexpected end of input")
	f(`{"model":"x"`, 12, "unexpected end of input")
	f(`{"model":"x",`, 13, "unexpected end of input")
	f(`{"model":"x",}`, 13, "want an object key")
	f(`{,}`, 1, "want an object key")
	f(`{model:"x"}`, 1, "want an object key")
	f(`{'model':"x"}`, 1, "want an object key")
	f(`{"model" "x"}`, 9, "want ':' after object key")
	f(`{"model"}`, 8, "want ':' after object key")
	f(`{"model":}`, 9, "want a value")
	f(`{"model":"x" "stream":true}`, 13, "want ',' or '}'")
	f(`{"model":"x";"stream":true}`, 12, "want ',' or '}'")
	f(`{"model":"x"}}`, 13, "unexpected data after the object")
	f(`{"model":"x"} {}`, 14, "unexpected data after the object")
	f(`{"model":"x"}x`, 13, "unexpected data after the object")
	f("{}\x00", 2, "unexpected data after the object")

	// Broken strings.
	f(`{"model`, 1, "unterminated string")
	f(`{"model":"x}`, 9, "unterminated string")
	f(`{"model":"x\"}`, 9, "unterminated string")
	f(`{"a":"\\\"}`, 5, "unterminated string")

	// Broken literals and numbers.
	f(`{"stream":tru}`, 10, "invalid literal")
	f(`{"stream":True}`, 10, "want a value")
	f(`{"stream":nul`, 10, "invalid literal")
	f(`{"stream":falsey}`, 15, "want ',' or '}'")
	f(`{"n":-}`, 6, "want a digit")
	f(`{"n":01}`, 6, "want ',' or '}'")
	f(`{"n":1.}`, 7, "want a digit")
	f(`{"n":.5}`, 5, "want a value")
	f(`{"n":1e}`, 7, "want a digit")
	f(`{"n":1e+}`, 8, "want a digit")
	f(`{"n":+1}`, 5, "want a value")
	f(`{"n":0x10}`, 6, "want ',' or '}'")
	f(`{"n":NaN}`, 5, "want a value")

	// Broken nesting.
	f(`{"a":[1,2}`, 9, "want ',' or ']'")
	f(`{"a":{"b":1]}`, 11, "want ',' or '}'")
	f(`{"a":[}`, 6, "want a value")
	f(`{"a":[1 2]}`, 8, "want ',' or ']'")
	f(`{"a":[,1]}`, 6, "want a value")
	f(`{"a":[1,]}`, 8, "want a value")
	f(`{"a":{"b"}}`, 9, "want ':' after object key")
	f(`{"a":{"b":}}`, 10, "want a value")
	f(`{"a":{1:2}}`, 6, "want an object key")
	f(`{"a":{"b":1,}}`, 12, "want an object key")
	f(`{"a":[[[[`, 9, "unexpected end of input")
	f(`{"a":[]]}`, 7, "want ',' or '}'")

	// Keys: invalid escapes and duplicates.
	f(`{"mod\el":1}`, 1, "invalid escape in key")
	f(`{"mod\u00":1}`, 1, "invalid escape in key")
	f(`{"mod\u006g":1}`, 1, "invalid escape in key")
	f(`{"model":1,"model":2}`, 11, `duplicate key "model"`)
	f(`{"model":1,"mod\u0065l":2}`, 11, `duplicate key "model"`)
	f(`{"mod\u0065l":1,"model":2}`, 16, `duplicate key "model"`)
	f(`{"messages":[],"model":1,"\u006dessages":[]}`, 25, `duplicate key "messages"`)
}

func TestSyntaxErrorMessage(t *testing.T) {
	err := rawjson.Lookup([]byte(`{"model":1,"model":2}`), []rawjson.Field{{Key: "model"}}, true)
	if got, want := fmt.Sprint(err), `invalid JSON at offset 11: duplicate key "model"`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLookupEarlyStop(t *testing.T) {
	// f checks that with all == false Lookup stops at the value of the last field it needs and
	// returns its span, while with all == true it reports an error in what follows.
	f := func(input, key, span string) {
		t.Helper()
		fields := []rawjson.Field{{Key: key}}
		if err := rawjson.Lookup([]byte(input), fields, false); err != nil {
			t.Fatalf("Lookup(%q, all=false): %v", input, err)
		}
		if got := input[fields[0].Start:fields[0].End]; got != span {
			t.Fatalf("Lookup(%q, all=false): %q = %q, want %q", input, key, got, span)
		}
		if err := rawjson.Lookup([]byte(input), fields, true); err == nil {
			t.Fatalf("Lookup(%q, all=true) succeeded, want an error", input)
		}
	}
	f(`{"model":"x",garbage`, "model", `"x"`)
	f(`{"model":"x"`, "model", `"x"`)
	f(`{"model":[1,{}]`, "model", `[1,{}]`)
	f(`{"model":1}trailing`, "model", `1`)
	// Duplicates after the stop go unnoticed, which is why access checks need all == true.
	f(`{"model":"allowed","model":"forbidden"}`, "model", `"allowed"`)

	// A missing field makes Lookup read to the end even with all == false.
	fields := []rawjson.Field{{Key: "model"}, {Key: "absent"}}
	if err := rawjson.Lookup([]byte(`{"model":"x",garbage}`), fields, false); err == nil {
		t.Fatal("Lookup with an absent field ignored garbage")
	}
}

func TestLookupRepeatedField(t *testing.T) {
	// Of repeated keys in fields only the first is filled in; the document is not at fault.
	fields := []rawjson.Field{{Key: "model"}, {Key: "model"}}
	if err := rawjson.Lookup([]byte(`{"model":1}`), fields, true); err != nil {
		t.Fatal(err)
	}
	if fields[0].Start != 9 || fields[1].Start != -1 {
		t.Fatalf("got %+v", fields)
	}
}

func TestLookupDepth(t *testing.T) {
	// Lookup accepts the nesting that encoding/json accepts, and no more.
	for _, depth := range []int{9999, 10000, 10001, 100000} {
		for _, c := range []struct{ open, close string }{{"[", "]"}, {`{"a":`, "}"}} {
			n := depth - 1 // the top-level object is the first level
			doc := []byte(`{"model":` + strings.Repeat(c.open, n) + "1" + strings.Repeat(c.close, n) + "}")
			err := rawjson.Lookup(doc, []rawjson.Field{{Key: "model"}}, true)
			if valid := json.Valid(doc); (err == nil) != valid {
				t.Errorf("depth %d of %s: json.Valid = %v, Lookup: %v", depth, c.open, valid, err)
			}
		}
	}
}

func TestLookupTruncated(t *testing.T) {
	// Every proper prefix of an object is malformed, and Lookup must say so without panicking.
	for name, doc := range corpus(t) {
		end := len(bytes.TrimRight(doc, " \t\r\n"))
		for n := range end {
			fields := []rawjson.Field{{Key: "model"}, {Key: "usage"}}
			_ = rawjson.Lookup(doc[:n], fields, false)
			var se *rawjson.SyntaxError
			if err := rawjson.Lookup(doc[:n], fields, true); !errors.As(err, &se) || se.Offset < 0 || se.Offset > n {
				t.Fatalf("%s cut at %d: got %v, want a *SyntaxError within the input", name, n, err)
			}
		}
	}
}

// TestLookupMatchesEncodingJSON compares Lookup with encoding/json on realistic documents.
func TestLookupMatchesEncodingJSON(t *testing.T) {
	for name, doc := range corpus(t) {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(doc, &top); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys := []string{"model", "stream", "messages", "usage", "choices", "absent"}
		for _, k := range slices.Sorted(maps.Keys(top)) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		fields := make([]rawjson.Field, len(keys))
		for i, k := range keys {
			fields[i].Key = k
		}
		for _, all := range []bool{false, true} {
			if err := rawjson.Lookup(doc, fields, all); err != nil {
				t.Fatalf("%s: Lookup(all=%v): %v", name, all, err)
			}
			for _, f := range fields {
				if err := sameAsEncodingJSON(doc, f, top); err != nil {
					t.Errorf("%s: Lookup(all=%v): %v", name, all, err)
				}
			}
		}
	}
}

// sameAsEncodingJSON checks the span that Lookup found for f against the value encoding/json
// decoded, in top, for the same key.
func sameAsEncodingJSON(doc []byte, f rawjson.Field, top map[string]json.RawMessage) error {
	want, ok := top[f.Key]
	if !ok {
		if f.Start != -1 {
			return fmt.Errorf("%q: found at %d, but encoding/json has no such key", f.Key, f.Start)
		}
		return nil
	}
	if f.Start < 0 {
		return fmt.Errorf("%q: not found", f.Key)
	}
	// RawMessage holds the exact bytes of the value, so the spans must be byte for byte the same,
	// which implies that they decode to the same value.
	got := doc[f.Start:f.End]
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%q: span %q, encoding/json has %q", f.Key, got, want)
	}
	if rawjson.KindOf(got) == rawjson.KindString {
		var s string
		if err := json.Unmarshal(got, &s); err != nil {
			return err
		}
		if u, err := rawjson.AppendUnquote(nil, got); err != nil || string(u) != s {
			return fmt.Errorf("%q: AppendUnquote(%q) = %q, %v; encoding/json gives %q", f.Key, got, u, err, s)
		}
	}
	return nil
}

// corpus returns the documents in testdata/corpus, which also seed FuzzLookup.
func corpus(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/corpus/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	docs := make(map[string][]byte)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(p)] = b
	}
	return docs
}

func TestKindOf(t *testing.T) {
	f := func(v string, want rawjson.Kind) {
		t.Helper()
		if got := rawjson.KindOf([]byte(v)); got != want {
			t.Fatalf("KindOf(%q) = %d, want %d", v, got, want)
		}
	}
	f(`"x"`, rawjson.KindString)
	f(`""`, rawjson.KindString)
	f(`0`, rawjson.KindNumber)
	f(`-1`, rawjson.KindNumber)
	f(`9.5`, rawjson.KindNumber)
	f(`{}`, rawjson.KindObject)
	f(`[]`, rawjson.KindArray)
	f(`true`, rawjson.KindTrue)
	f(`false`, rawjson.KindFalse)
	f(`null`, rawjson.KindNull)
	f(``, rawjson.KindInvalid)
	f(` 1`, rawjson.KindInvalid)
	f(`x`, rawjson.KindInvalid)
	f(`+1`, rawjson.KindInvalid)
}

func TestStringBytes(t *testing.T) {
	f := func(v, want string, wantOK bool) {
		t.Helper()
		got, ok := rawjson.StringBytes([]byte(v))
		if string(got) != want || ok != wantOK {
			t.Fatalf("StringBytes(%q) = %q, %v; want %q, %v", v, got, ok, want, wantOK)
		}
	}
	f(`"gpt-4o"`, "gpt-4o", true)
	f(`""`, "", true)
	f(`"指令 🙂"`, "指令 🙂", true)
	f(`"a\"b"`, "", false)
	f(`"mod\u0065l"`, "", false)
	f(`1`, "", false)
	f(`"`, "", false)
	f(`"x`, "", false)
	f(``, "", false)
	f(`null`, "", false)
}

func TestAppendUnquote(t *testing.T) {
	// f checks AppendUnquote(v) and RuneCount(v), and that encoding/json
	// agrees when v is valid JSON.
	f := func(v, want string) {
		t.Helper()
		got, err := rawjson.AppendUnquote([]byte("prefix:"), []byte(v))
		if err != nil || string(got) != "prefix:"+want {
			t.Fatalf("AppendUnquote(%q) = %q, %v; want %q", v, got, err, "prefix:"+want)
		}
		if n, ok := rawjson.RuneCount([]byte(v)); !ok || n != utf8.RuneCountInString(want) {
			t.Fatalf("RuneCount(%q) = %d, %v; want %d", v, n, ok, utf8.RuneCountInString(want))
		}
		var s string
		if json.Valid([]byte(v)) {
			if err := json.Unmarshal([]byte(v), &s); err != nil || s != want {
				t.Fatalf("encoding/json decodes %q to %q, %v; the test wants %q", v, s, err, want)
			}
		}
	}
	f(`""`, "")
	f(`"gpt-4o"`, "gpt-4o")
	f(`"a\"b\\c\/d"`, `a"b\c/d`)
	f(`"\b\f\n\r\t"`, "\b\f\n\r\t")
	f(`"mod\u0065l"`, "model")
	f(`"\u00e9\u00C9\u4e16"`, "éÉ世")
	f(`"\u0000"`, "\x00")
	f(`"\ud83d\ude00!"`, "😀!")
	f(`"\uD83D\uDE00"`, "😀")
	f(`"\ud83d"`, "\uFFFD")
	f(`"\ud83dx"`, "\uFFFDx")
	f(`"\ude00\ud83d"`, "\uFFFD\uFFFD")
	f(`"\ud83d\u0041"`, "\uFFFDA")
	f(`"\ud83d\ud83d\ude00"`, "\uFFFD😀")
	f(`"é 🙂"`, "é 🙂")
	f("\"bad \xff\xfe utf8\"", "bad \uFFFD\uFFFD utf8")
	f("\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD") // an encoded surrogate is invalid UTF-8

	// fErr checks that AppendUnquote rejects v with a *SyntaxError at
	// offset, and RuneCount rejects it.
	fErr := func(v string, offset int) {
		t.Helper()
		if n, ok := rawjson.RuneCount([]byte(v)); ok {
			t.Fatalf("RuneCount(%q) = %d, ok", v, n)
		}
		_, err := rawjson.AppendUnquote(nil, []byte(v))
		var se *rawjson.SyntaxError
		if !errors.As(err, &se) || se.Offset != offset {
			t.Fatalf("AppendUnquote(%q): %v, want a *SyntaxError at offset %d", v, err, offset)
		}
	}
	fErr(``, 0)
	fErr(`"`, 0)
	fErr(`x`, 0)
	fErr(`1`, 0)
	fErr(`"abc`, 0)
	fErr(`"a\x"`, 2)
	fErr(`"a\"`, 2)
	fErr(`"\u12"`, 1)
	fErr(`"\u12g4"`, 1)
	fErr(`"ok\ud83d\uzzzz"`, 9)
	fErr(`"\U00e9"`, 1)
}

func TestEmpty(t *testing.T) {
	f := func(v string, object, array bool) {
		t.Helper()
		if got := rawjson.ObjectEmpty([]byte(v)); got != object {
			t.Fatalf("ObjectEmpty(%q) = %v", v, got)
		}
		if got := rawjson.ArrayEmpty([]byte(v)); got != array {
			t.Fatalf("ArrayEmpty(%q) = %v", v, got)
		}
	}
	f(`{}`, true, false)
	f("{ \t\r\n}", true, false)
	f(`[]`, false, true)
	f("[\n]", false, true)
	f(`{"a":1}`, false, false)
	f(`[0]`, false, false)
	f(`{`, false, false)
	f(``, false, false)
	f(`null`, false, false)
	f(`"{}"`, false, false)
}

func ExampleLookup() {
	body := []byte(`{"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}`)
	fields := []rawjson.Field{{Key: "model"}, {Key: "stream"}}
	if err := rawjson.Lookup(body, fields, true); err != nil {
		panic(err)
	}
	model, stream := fields[0], fields[1]
	name, _ := rawjson.StringBytes(body[model.Start:model.End])
	fmt.Printf("model %s, stream present: %v\n", name, stream.Start >= 0)

	// Splice in a replacement without re-encoding the rest of the body.
	out := slices.Concat(body[:model.Start], []byte(`"gpt-4o-2024-08-06"`), body[model.End:])
	fmt.Printf("%s\n", out)
	// Output:
	// model gpt-4o, stream present: false
	// {"model": "gpt-4o-2024-08-06", "messages": [{"role": "user", "content": "Hi"}]}
}
