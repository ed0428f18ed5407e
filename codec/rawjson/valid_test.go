package rawjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// validSeeds are documents on the edges of JSON's grammar, for the tests
// and the fuzz targets that hold a validator to encoding/json.Valid.
func validSeeds() []string {
	long := strings.Repeat("a", 40)
	seeds := []string{
		// whole documents and whitespace
		``, ` `, "\t\n\r ", `{}`, `[]`, ` {} `, "\n[\r]\t", `{ }`, `[ ]`, `""`, `0`, `true`, `false`, `null`,
		"\v{}", "\f[]", "{}\v", "\u00a0{}", "\ufeff{}", "{}\x00", "\x00", "{\n}", "[\t1\t,\r2\n]",
		// several values, trailing garbage
		`{}{}`, `{} {}`, `[] []`, `1 2`, `"a" "b"`, `{},`, `[],`, `{}]`, `[]]`, `{}}`, `[1]]`, `{"a":1}}`, `nullx`, `truefalse`, `1}`, `"a"]`,
		// literals
		`tru`, `fals`, `nul`, `True`, `NULL`, `[tru]`, `[nul]`, `[truex]`, `[true,false,null]`, `{"a":t}`, `nan`, `NaN`, `Infinity`, `-Infinity`,
		// numbers
		`01`, `-01`, `00`, `-0`, `-`, `--1`, `+1`, `1.`, `.1`, `1.e5`, `1e`, `1e+`, `1e-`, `1E5`, `1e+05`, `-0.0e-0`, `0x1`, `1_000`,
		`[01]`, `[1.]`, `[-]`, `[1e]`, `{"a":01}`, `{"a":-}`, `[1e5.0]`, `[1.5.5]`, `123456789012345678901234567890`, `[0,-0,1.25e-3]`,
		`1 `, ` 1`, `[1 ]`, `[ 1]`, `[1,2 ,3]`, `-1e`, `0.`, `0e`, `2e308`, `[-01]`, `{"a":1.0e}`, `[0.0.0]`,
		// strings: escapes, control characters, unterminated
		`"abc`, `"`, `"\"`, `"\\"`, `"\\\"`, `"a\"b"`, `"\/"`, `"\b\f\n\r\t"`, `"\q"`, `"\x41"`, `"\'"`, `"\u"`, `"\u12"`, `"\u123"`,
		`"\u123g"`, `"\u00e9"`, `"\uD83D\uDE00"`, `"\uD83D"`, `"\uDE00x"`, `"\U0041"`, `"\0"`, "\"\x00\"", "\"a\x01b\"", "\"\x1f\"",
		"\"\t\"", "\"\n\"", "\"\x7f\"", "\"\x80\xff\"", "\"\xc3\xa9\"", "\"\xed\xa0\x80\"", `"\` + "\n" + `"`, `"\`,
		`"` + long, `"` + long + `\`, `"` + long + `\"`, `"` + long + `"`, `"` + long + "\x01\"", `"` + long + `\q"`, `"` + long + `\u00"`,
		" \"00000000000000000000000000000000", "\"00000000000000000000000000000000", `["` + long, `["` + long + `"`, `["` + long + `"]`,
		`{"` + long + `":"` + long + `"}`, `{"` + long + "\x1f\":1}", `["` + strings.Repeat(`\\`, 20) + `"]`, `["` + strings.Repeat(`\\`, 20) + `\"]`,
		`"` + strings.Repeat("x", 31) + `"`, `"` + strings.Repeat("x", 32) + `"`, `"` + strings.Repeat("x", 33) + `"`, `"` + strings.Repeat("x", 64) + "\x05" + `"`,
		`"` + strings.Repeat("y", 100) + `\u00e9` + strings.Repeat("z", 70) + `"`, `"` + strings.Repeat("y", 100) + "\x7f\xff" + `"`,
		// strings long enough for the vectorized searches, with what ends them at each offset of a word
		`"` + strings.Repeat("x", 600) + `"`, `"` + strings.Repeat("x", 600), `"` + strings.Repeat("x", 700) + `\`,
		`"` + strings.Repeat("x", 300) + "\x01" + strings.Repeat("x", 300) + `"`, `"` + strings.Repeat("x", 301) + `\n` + strings.Repeat("x", 300) + `"`,
		`"` + strings.Repeat("x", 302) + `\q` + strings.Repeat("x", 300) + `"`, `["` + strings.Repeat("x", 403) + `\"` + strings.Repeat("x", 100) + `"]`,
		`["` + strings.Repeat("x", 404) + `\\"` + strings.Repeat("x", 100) + `"]`, `{"a":"` + strings.Repeat("x", 405) + "\x1f" + `"}`,
		`{"a":"` + strings.Repeat("x", 406) + `\u12` + `"}`, `{"a":"` + strings.Repeat("x", 407) + `"}`, `{"a":"` + strings.Repeat("x ", 300) + "\x7f\xc3\xa9\t" + `"}`,
		// objects and arrays
		`{"a":1,}`, `[1,]`, `[,1]`, `[,]`, `{,}`, `[1 2]`, `[1,,2]`, `{"a" 1}`, `{"a":1 "b":2}`, `{1:2}`, `{a:1}`, `{'a':1}`, `{"a"}`,
		`{"a":}`, `{"a"::1}`, `{"a",1}`, `{"a":1,"a":2}`, `{"":""}`, `[{}]`, `[[]]`, `{"a":[1,{"b":[tru]}]}`, `{"a":[1,{"b":[true]}]}`,
		`[}`, `{]`, `[{]}`, `{"a":[}]}`, `[1}`, `{"a":1]`, `{"a":{"b":{"c":[]}}}`, `[[[[[]]]]]`, `[[[[[]]]]`, `{"a":"\u0000"}`,
		`{"a" : "b" , "c" : [ 1 , { } ] }`, `{"a":"b",}`, `{"a":"b","}`, `{"a":"b":"c"}`, `{"a":"b"]`, `["a":"b"]`, `{"a","b"}`,
		`{"a":"b","c"}`, `{"a":"b" "c":1}`, `{"a\"":1}`, `{"a\\":1}`, `{"\u0061":1}`,
		// requests and stream chunks
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"model":"m","usage":{"prompt_tokens":1},"x":{"model":"n","usage":null}}`, `{"a":{"model":1},"model":"m"}`, `{"mod\u0065l":"a","model":"b"}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[],"model":"a","model":"b"}`, `{"stream":true,"stre\u0061m":false}`, `{"model" : "a" , "messages" : [ ] }`,
		"{\n  \"a\": [1, 2.5e3, -0],\n\t\"b\": {\"c\": \"d\\n\"}\r\n}\n",
	}
	// A string's first bytes are checked a word at a time and the rest by
	// vectorized searches: what ends it on either side of the switch.
	for n := 56; n <= 112; n += 3 {
		x := strings.Repeat("x", n)
		seeds = append(seeds, `"`+x+"\x01"+x+`"`, `"`+x+`\n`+x+`"`, `"`+x+`\q"`, `["`+x+`\"`+x+`"]`, `{"a":"`+x+`"}`)
	}
	for _, d := range []int{62, 63, 64, 65, 100, 127, 128} {
		seeds = append(seeds, strings.Repeat("[", d)+strings.Repeat("]", d), strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d),
			strings.Repeat("[", d)+strings.Repeat("]", d-1), strings.Repeat("[", d)+"{}"+strings.Repeat("]", d))
	}
	return seeds
}

// addValidSeeds adds validSeeds and the documents of testdata/corpus to
// f's seeds.
func addValidSeeds(f *testing.F) {
	for _, s := range validSeeds() {
		f.Add([]byte(s))
	}
	paths, err := filepath.Glob("testdata/corpus/*.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no corpus: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// TestValidMatchesEncodingJSON checks Valid against encoding/json.Valid on
// the seeds, each also cut short at every length, and on nesting around
// sonic's limit (4096) and encoding/json's (10000).
func TestValidMatchesEncodingJSON(t *testing.T) {
	check := func(doc string) {
		t.Helper()
		if got, want := rawjson.Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Errorf("Valid(%.80q) = %v, encoding/json says %v", doc, got, want)
		}
	}
	for _, doc := range validSeeds() {
		for n := range len(doc) + 1 {
			check(doc[:n])
		}
	}
	for _, d := range []int{4096, 4097, 9999, 10000, 10001, 20000} {
		check(strings.Repeat("[", d) + strings.Repeat("]", d))
		check(strings.Repeat(`{"":`, d-1) + "[]" + strings.Repeat("}", d-1))
		check(strings.Repeat(`{"":`, d-1) + "{ }" + strings.Repeat("}", d-1))
		check(strings.Repeat(`[{"a":`, d/2) + "0" + strings.Repeat("}]", d/2))
		check(strings.Repeat("[", d) + strings.Repeat("]", d-1))
		check(strings.Repeat("[", d) + strings.Repeat("]", d) + " ")
	}
}

// TestValidStringBytes holds Valid and CheckString to encoding/json.Valid
// on strings of every length to 200 bytes (past where a string goes to
// longString, with and without an escape before that, and after escapes
// close together), each with a control character, a
// quote, a backslash, an escape or a non-ASCII byte at each place: the
// words read at the ends of a string overlap bytes passed already.
func TestValidStringBytes(t *testing.T) {
	for _, head := range []string{"", `\n`, strings.Repeat("x", 70) + `\t`, strings.Repeat(`ab\n`, 30)} {
		for n := range 201 {
			text := []byte(strings.Repeat("a", n))
			for at := range n {
				for _, c := range []string{"\x01", `"`, `\`, `\u00e9`, "\xc3\xa9"} {
					doc := `{"k":"` + head + string(text[:at]) + c + string(text[at+1:]) + `"}`
					if got, want := rawjson.Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
						t.Fatalf("Valid(%q) = %v, encoding/json says %v", doc, got, want)
					}
					// The string on its own (stringEnd): valid to the document's
					// last quote exactly when the document is.
					if end, _ := rawjson.CheckString([]byte(doc), 5); (end == len(doc)-1) != json.Valid([]byte(doc)) {
						t.Fatalf("CheckString(%q, 5) = %d", doc, end)
					}
				}
			}
		}
	}
}

// TestValidIndented checks Valid against encoding/json.Valid on the corpus
// indented in the ways whitespace can be laid out (runs of spaces longer
// than a word, tabs, carriage returns), whole and cut short, and with a
// control character in place of each byte of whitespace.
func TestValidIndented(t *testing.T) {
	paths, err := filepath.Glob("testdata/corpus/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, p := range paths {
		doc, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, indent := range []string{"  ", "\t", strings.Repeat(" ", 9), " \t"} {
			var buf bytes.Buffer
			if err := json.Indent(&buf, doc, "", indent); err != nil {
				continue // not valid JSON: Indent has nothing to lay out
			}
			for _, d := range [][]byte{buf.Bytes(), bytes.ReplaceAll(buf.Bytes(), []byte("\n"), []byte("\r\n"))} {
				for n := 0; n <= len(d); n += 1 + n/64 {
					if got, want := rawjson.Valid(d[:n]), json.Valid(d[:n]); got != want {
						t.Fatalf("Valid(%s indented %q, cut at %d) = %v, encoding/json says %v", p, indent, n, got, want)
					}
				}
				for i, c := range d {
					if c != ' ' && c != '\n' {
						continue
					}
					e := slices.Clone(d)
					e[i] = 0x0b
					if rawjson.Valid(e) {
						t.Fatalf("Valid(%s indented %q with a control character at %d) = true", p, indent, i)
					}
				}
			}
		}
	}
}

// FuzzValid holds Valid to encoding/json.Valid on every input, with the
// vector search for long strings and without: an event that Valid passes
// reaches a client's parser, and an event that encoding/json takes must not
// end a stream.
func FuzzValid(f *testing.F) {
	addValidSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b)
		rawjson.BothWays(t, func(way string) {
			if got := rawjson.Valid(b); got != want {
				t.Fatalf("%s: Valid(%q) = %v, encoding/json says %v", way, b, got, want)
			}
		})
	})
}

// firstKey is where a search for the key finds its value (as the
// relay's search for a chunk's model once did): after the first `"key"` whose quote no odd
// run of backslashes precedes and that a colon follows; -1 if none.
func firstKey(b []byte, key string) int {
	k := []byte(`"` + key + `"`)
	for off := 0; ; {
		i := bytes.Index(b[off:], k)
		if i < 0 {
			return -1
		}
		at := off + i
		n := 0
		for at-1-n >= 0 && b[at-1-n] == '\\' {
			n++
		}
		j := rawjson.SkipSpace(b, at+len(k))
		if j < len(b) && b[j] == ':' && n%2 == 0 {
			return rawjson.SkipSpace(b, j+1)
		}
		off = at + 1
	}
}

// validKeys are the keys FuzzValidKeys and TestValidKeys look for.
var validKeys = []string{"model", "usage", "a", ""}

func TestValidKeys(t *testing.T) {
	f := func(doc string, want ...string) {
		t.Helper()
		at := []int{7, 7, 7, 7}
		if !rawjson.ValidKeys([]byte(doc), validKeys, at) {
			t.Fatalf("ValidKeys(%s) = false", doc)
		}
		for k, key := range validKeys {
			got := ""
			if at[k] >= 0 {
				got = doc[at[k]:min(at[k]+3, len(doc))]
			} else if at[k] != -1 {
				t.Fatalf("ValidKeys(%s): %q at %d, want -1", doc, key, at[k])
			}
			if got != want[k] {
				t.Errorf("ValidKeys(%s): %q at %q, want %q", doc, key, got, want[k])
			}
		}
	}
	f(`{}`, "", "", "", "")
	f(`{"model":"m1","usage":null,"a":123,"":[1]}`, `"m1`, `nul`, `123`, `[1]`)
	f(`{"x":{"model":"m1"},"model":"m2"}`, `"m1`, "", "", "")
	f(`{"mod\u0065l":"m1","model":"m2"}`, `"m2`, "", "", "")
	f(`{"models":1,"modelx":2,"Model":3}`, "", "", "", "")
	f(`[{"a" : 1},{"a":2}]`, "", "", `1},`, "")
	f("{\"a\"\n:\t\"v\"}", "", "", `"v"`, "")
	f(`{"k":"\"model\":1","usage":{}}`, "", `{}}`, "", "")
	f(`{"model":"a","model":"b"}`, `"a"`, "", "", "")
	if rawjson.ValidKeys([]byte(`{"model":"a",}`), validKeys, make([]int, 4)) {
		t.Error("ValidKeys took invalid JSON")
	}
}

// FuzzValidKeys holds ValidKeys to encoding/json.Valid, and what it finds to
// firstKey, the search it saves the relay.
func FuzzValidKeys(f *testing.F) {
	addValidSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		at := make([]int, len(validKeys))
		ok := rawjson.ValidKeys(b, validKeys, at)
		if want := json.Valid(b); ok != want {
			t.Fatalf("ValidKeys(%q) = %v, encoding/json says %v", b, ok, want)
		}
		if !ok {
			return
		}
		for k, key := range validKeys {
			if want := firstKey(b, key); at[k] != want {
				t.Fatalf("ValidKeys(%q): %q at %d, the search finds it at %d", b, key, at[k], want)
			}
		}
	})
}

// lookupFields are the fields the LookupValid tests ask for: those of
// openai.ChatRequest.Parse, and two more.
func lookupFields() []rawjson.Field {
	return []rawjson.Field{{Key: "model"}, {Key: "messages"}, {Key: "stream"}, {Key: "stream_options"}, {Key: "a"}, {Key: ""}}
}

// depth is the deepest nesting of containers in the valid JSON b.
func depth(b []byte) int {
	d, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = rawjson.StringEnd(b, i) - 1
		case '{', '[':
			d++
			deepest = max(deepest, d)
		case '}', ']':
			d--
		}
	}
	return deepest
}

func TestLookupValid(t *testing.T) {
	none := [2]int{-1, -1}
	ok := func(doc string) {
		t.Helper()
		fields, want := lookupFields(), lookupFields()
		if err := rawjson.LookupValid([]byte(doc), fields); err != nil {
			t.Fatalf("LookupValid(%.80q): %v", doc, err)
		}
		if err := rawjson.Lookup([]byte(doc), want, true); err != nil || !slices.Equal(fields, want) {
			t.Fatalf("LookupValid(%.80q) found %v, Lookup %v (%v)", doc, fields, want, err)
		}
	}
	bad := func(doc string) {
		t.Helper()
		err := rawjson.LookupValid([]byte(doc), lookupFields())
		var se *rawjson.SyntaxError
		if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(doc) {
			t.Errorf("LookupValid(%.80q) = %v, want a *SyntaxError", doc, err)
		}
	}
	ok(`{}`)
	ok(` { "model" : "m" , "messages" : [ {"role":"user"} ] , "a" : null } `)
	ok(`{"x":{"model":"inner"},"model":"m","stream":true,"stream_options":{"include_usage":true},"":0}`)
	ok(`{"mod\u0065l":"m","b":"\u00e9\"\\\/\b\f\n\r\t"}`)
	ok(`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`) // 10000 levels with the object
	bad(`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`)
	bad(`{"a":` + strings.Repeat("[", 9998) + "{ }" + strings.Repeat("]", 9998) + `,"b":` + strings.Repeat("[", 9999) + "{}" + strings.Repeat("]", 9999) + `}`)
	bad(`[]`)
	bad(`"model"`)
	bad(`{"model":"a","model":"b"}`)
	bad(`{"model":"a","mod\u0065l":"b"}`)
	bad("{\"model\":\"a\x01\"}")
	bad("{\"a\x01\":1}")
	bad(`{"model":"\x"}`)
	bad(`{"x":"\u00"}`)
	bad(`{"x":[1,]}`)
	bad(`{"x":01}`)
	bad(`{"x":1}x`)
	bad(`{"x":"` + strings.Repeat("a", 40))
	// Top-level strings and numbers, checked outside validValue.
	ok(`{"model":"","stream":-0.5e+3,"a":"\u00e9","b":0,"c":"x"}`)
	for _, v := range []string{`-`, `1.`, `.5`, `+1`, `1e`, `-01`, `"\u12"`, `"\q"`, `"a`, "\"\t\"", `"`} {
		bad(`{"model":` + v + `}`)
		bad(`{"model":` + v)
	}
	// Answers as main gave them at 9f73b4a, before lookupValid read keys
	// itself: spans of model and stream, and the error, exactly.
	long := strings.Repeat("k", 80)
	for _, c := range []struct {
		doc           string
		model, stream [2]int
		err           string
	}{
		{`{"` + long + `":1,"model":"m"}`, [2]int{94, 97}, none, ""},
		{`{"` + long + `\u0041":1,"model":"m"}`, [2]int{100, 103}, none, ""},
		{`{"` + strings.Repeat("k", 70) + `\n":1,"model":"m"}`, [2]int{86, 89}, none, ""},
		{`{"` + long + "é" + `":1,"model":"m"}`, [2]int{96, 99}, none, ""},
		{`{"` + long + "\x01" + `":1}`, none, none, "invalid JSON at offset 1: invalid string"},
		{`{"` + long + `\x":1}`, none, none, "invalid JSON at offset 1: invalid string"},
		{`{"` + long + `":"` + long + `\"` + long + `"}`, none, none, ""},
		{`{"mod\u0065l":"a","model":"b"}`, [2]int{14, 17}, none, `invalid JSON at offset 18: duplicate key "model"`},
		{`{"model":"a","mod\u0065l":"b"}`, [2]int{9, 12}, none, `invalid JSON at offset 13: duplicate key "model"`},
		{`{"model":"a", "mod\u0065l" : "b"}`, [2]int{9, 12}, none, `invalid JSON at offset 14: duplicate key "model"`},
		{`{"m\u006fdel":"a",` + "\n" + `"model":"b"}`, [2]int{14, 17}, none, `invalid JSON at offset 19: duplicate key "model"`},
		{`{"model":` + "\t\r\n " + `"m",` + "\r\n\t " + `"stream":true}`, [2]int{13, 16}, [2]int{30, 34}, ""},
		{`{"model":` + "\v" + `"m"}`, none, none, "invalid JSON at offset 9: invalid value"},
		{`{"model":"m",` + "\v" + `"stream":true}`, [2]int{9, 12}, none, "invalid JSON at offset 13: want an object key"},
		{`{"model":` + "\x00" + `"m"}`, none, none, "invalid JSON at offset 9: invalid value"},
		{`{"model":"m",` + "\x00" + `"stream":true}`, [2]int{9, 12}, none, "invalid JSON at offset 13: want an object key"},
		{`{"model":` + "\x1f" + `"m"}`, none, none, "invalid JSON at offset 9: invalid value"},
		{`{"model":"m",` + "\x7f" + `"stream":true}`, [2]int{9, 12}, none, "invalid JSON at offset 13: want an object key"},
		{`{"model":"m"` + "\f" + `,"stream":true}`, [2]int{9, 12}, none, "invalid JSON at offset 12: want ',' or '}'"},
		{`{"model"` + "\f" + `:"m"}`, none, none, "invalid JSON at offset 8: want ':' after object key"},
		{`{"model":"m",}`, [2]int{9, 12}, none, "invalid JSON at offset 13: want an object key"},
		{`{"model":"m",` + "\n" + `}`, [2]int{9, 12}, none, "invalid JSON at offset 14: want an object key"},
		{`{"model":"m"` + "\n\t" + `}`, [2]int{9, 12}, none, ""},
		{`{"model":` + "\xa0" + `"m"}`, none, none, "invalid JSON at offset 9: invalid value"},
	} {
		fields := []rawjson.Field{{Key: "model"}, {Key: "stream"}}
		err := rawjson.LookupValid([]byte(c.doc), fields)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if m, s := fields[0], fields[1]; got != c.err || [2]int{m.Start, m.End} != c.model || [2]int{s.Start, s.End} != c.stream {
			t.Errorf("LookupValid(%.90q) = %v %v, %q; want %v %v, %q", c.doc, [2]int{m.Start, m.End}, [2]int{s.Start, s.End}, got, c.model, c.stream, c.err)
		}
	}
}

// FuzzLookupValid holds LookupValid to encoding/json.Valid and Lookup: it
// must accept a document if and only if both do, and then find what Lookup
// finds. It also compares it with the three passes it replaces in
// openai.ChatRequest.Parse (sonic.Valid, ValidStrings, Lookup), which
// differ only where sonic's nesting limit is below encoding/json's: sonic
// already refuses some documents 4096 deep, such as the seed added here.
func FuzzLookupValid(f *testing.F) {
	addValidSeeds(f)
	f.Add([]byte(`{"a":` + strings.Repeat(`{"b":`, 4095) + `1` + strings.Repeat(`}`, 4096)))
	f.Fuzz(func(t *testing.T, b []byte) {
		fields, want := lookupFields(), lookupFields()
		err := rawjson.LookupValid(b, fields)
		lookupErr := rawjson.Lookup(b, want, true)
		valid := json.Valid(b)
		if (err == nil) != (valid && lookupErr == nil) {
			t.Fatalf("LookupValid(%q) = %v; encoding/json.Valid %v, Lookup %v", b, err, valid, lookupErr)
		}
		if err == nil && !slices.Equal(fields, want) {
			t.Fatalf("LookupValid(%q) found %v, Lookup %v", b, fields, want)
		}
		old := sonic.Valid(b) && rawjson.ValidStrings(b) && lookupErr == nil
		if old != (err == nil) && !(err == nil && depth(b) >= 4096) {
			t.Fatalf("LookupValid(%q) = %v; sonic.Valid+ValidStrings+Lookup accept: %v", b, err, old)
		}
		marked, merr := rawjson.LookupValidMarked(b, lookupFields(), &testMark)
		if (merr == nil) != (err == nil) {
			t.Fatalf("LookupValidMarked(%q) = %v, LookupValid %v", b, merr, err)
		}
		var v any // escapes decoded: compare documents without them
		if err == nil && !bytes.Contains(b, []byte{'\\'}) && json.Unmarshal(b, &v) == nil && marked != markedValue(v) {
			t.Fatalf("LookupValidMarked(%q) marked %v, a string value starting %q: %v", b, marked, testMark, !marked)
		}
	})
}

var testMark = [8]byte([]byte("rosetta:"))

// markedValue reports whether a decoded document holds a string value
// (not a key) that starts with testMark.
func markedValue(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.HasPrefix(v, string(testMark[:]))
	case []any:
		return slices.ContainsFunc(v, markedValue)
	case map[string]any:
		for _, e := range v {
			if markedValue(e) {
				return true
			}
		}
	}
	return false
}

func TestLookupValidMarked(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"model":"m","messages":[{"content":[{"signature":"rosetta:anthropic:abc"}]}]}`: true,
		`{"model":"rosetta:x"}`:              true,
		`{"rosetta:x":"y","a":["rosetta"]}`:  false, // a key, and a shorter string
		`{"a":" rosetta:x","b":"Rosetta:x"}`: false,
		`{"a":{"b":[1,{"c":"rosetta:"}]}}`:   true,
		`{"a":"\u0072osetta:x"}`:             false, // escapes are not decoded
		`{"a":"rosetta:"}`:                   true,  // all 8 bytes, then the quote
		`{"a":"rosetta"}`:                    false,
		`{"rosetta:":1,"b":2}`:               false,
	} {
		fields := lookupFields()
		marked, err := rawjson.LookupValidMarked([]byte(doc), fields, &testMark)
		if err != nil || marked != want {
			t.Errorf("LookupValidMarked(%s) = %v, %v; want %v", doc, marked, err, want)
		}
	}
}

// FuzzValidTopKeys: ValidTopKeys finds a key where Lookup finds it among
// the top-level members (in a document where Lookup finds no duplicate,
// keys written without escapes), and no nested one.
func FuzzValidTopKeys(f *testing.F) {
	addValidSeeds(f)
	f.Add([]byte(`{"a":{"model":"x"},"model":"y","usage":{"usage":1}}`))
	f.Add([]byte(`[{"model":"x"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		at := make([]int, len(validKeys))
		ok := rawjson.ValidTopKeys(b, validKeys, at)
		if want := json.Valid(b); ok != want {
			t.Fatalf("ValidTopKeys(%q) = %v, encoding/json says %v", b, ok, want)
		}
		checkScoped(t, b, at)
		fields := make([]rawjson.Field, len(validKeys))
		for k, key := range validKeys {
			fields[k].Key = key
		}
		if !ok || rawjson.Lookup(b, fields, true) != nil || bytes.IndexByte(b, '\\') >= 0 {
			return
		}
		for k, key := range validKeys {
			if at[k] != fields[k].Start {
				t.Fatalf("ValidTopKeys(%q): %q at %d, Lookup finds it at %d", b, key, at[k], fields[k].Start)
			}
		}
	})
}

// checkScoped checks that ValidKeysScoped finds each key of validKeys as
// ValidTopKeys (which found top) does when its bit is set, else as
// ValidKeys does.
func checkScoped(t *testing.T, b []byte, top []int) {
	t.Helper()
	anywhere, scoped := make([]int, len(validKeys)), make([]int, len(validKeys))
	rawjson.ValidKeys(b, validKeys, anywhere)
	const mask = 0b0101
	if ok := rawjson.ValidKeysScoped(b, validKeys, scoped, mask); ok != json.Valid(b) || !ok {
		return
	}
	for k := range validKeys {
		want := anywhere[k]
		if mask>>k&1 == 1 {
			want = top[k]
		}
		if scoped[k] != want {
			t.Fatalf("ValidKeysScoped(%q, %b): %q at %d, want %d", b, mask, validKeys[k], scoped[k], want)
		}
	}
}

// TestValidNumbers holds Valid to encoding/json on numbers whose runs of
// digits end at every place in a word and beyond, before each byte next to
// the digits' range and the bytes whose sum with 6 carries: digits reads
// eight bytes at a time.
func TestValidNumbers(t *testing.T) {
	for n := 0; n <= 20; n++ {
		run := strings.Repeat("0123456789", 2)[:n]
		for _, after := range []string{"", ",", "]", "/", ":", ";", "?", "@", ".", ".5", "e3", "E+", " ", "\xfa", "\xff", "0"} {
			for _, doc := range []string{"[1" + run + after + "]", "[0." + run + after + "]", "[1e" + run + after + "]",
				"-1" + run + after, `{"a":2.` + run + after + `}`} {
				if got, want := rawjson.Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
					t.Errorf("Valid(%q) = %v, encoding/json says %v", doc, got, want)
				}
			}
		}
	}
}

// numberTokens are numbers and near-numbers for the checks of arrays of
// numbers: every part of the grammar, right and wrong, short and long
// enough to cross the two words a number is read from.
var numberTokens = []string{
	"0", "-0", "7", "-7", "0.5", "-0.0123456", "0.02103649", "-0.0012345678", "0.006929283495992422",
	"-4.547132266452536e-05", "1e5", "1E+5", "-2.5e-3", "1234567.5", "12345678.5", "-123456789012345678901",
	"0.12345678901234567890123", "00", "01", "-01.5", "00.1", "-", "--1", "+1", ".5", "-.5", "1.", "1.e5",
	"1.2.3", "0.5e", "0.5e+", "0.5E-", "1e", "0x1", "1-2", "0.1-", "0.5f", "1.5\xfa", "9\xff", "0.1\x00",
	"0.12345678901234\xfa5", "1,", "", " ", "\"a\"", "null", "[]",
}

// TestValidNumberArrays holds Valid to encoding/json.Valid on each number
// token as an element of an array of floats, at every offset from the
// array's start modulo 16, compact and with the whitespace of indented
// JSON, and at the array's end.
func TestValidNumberArrays(t *testing.T) {
	floats := []string{"-0.0123456", "0.5", "0.98765432", "-1", "12.25", "-0.000123", "3", "0.1", "-0.02", "0.1234567"}
	for _, sep := range []string{",", ",\n        ", ", ", ",\t", ",\r\n  "} {
		for _, tok := range numberTokens {
			for lead := range 16 {
				head := "[" + strings.Repeat("1,", lead/2) + strings.Repeat(" ", lead%2)
				for _, n := range []int{0, 1, 3} {
					doc := head + strings.Join(floats[:n], sep) + sep[:min(n, 1)*len(sep)] + tok
					for _, tail := range []string{"]", sep + strings.Join(floats, sep) + "]", "\n]"} {
						if got, want := rawjson.Valid([]byte(doc+tail)), json.Valid([]byte(doc+tail)); got != want {
							t.Errorf("Valid(%q) = %v, encoding/json says %v", doc+tail, got, want)
						}
					}
				}
			}
		}
	}
}

// FuzzValidNumberArray holds Valid to encoding/json.Valid on arrays of
// numbers (an embedding's): the fuzzed bytes among floats, compact and
// indented, so that they are read as the floats before them are.
func FuzzValidNumberArray(f *testing.F) {
	for _, tok := range numberTokens {
		f.Add([]byte(tok))
	}
	f.Add([]byte("0.0023064255,-0.009327292,-0.0028842222"))
	f.Add([]byte("0.0023064255,\n        -0.009327292,\n        -4.547132266452536e-05"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, doc := range []string{
			"[" + string(b) + "]",
			"[-0.0123456,0.98765432," + string(b) + ",0.5,-0.25,0.125,-0.0625,0.03125]",
			"[\n  -0.0123456,\n  " + string(b) + ",\n  0.98765432,\n  -0.25\n]",
		} {
			if got, want := rawjson.Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
				t.Fatalf("Valid(%q) = %v, encoding/json says %v", doc, got, want)
			}
		}
	})
}

// TestValidNextObject holds the step from an object that closes to the
// next one of its array (`},{"`, taken without the general path) to
// encoding/json: at every depth around a stack word's 63 levels and
// encoding/json's limit, and where no array holds the objects (the
// top-level value ends at the brace; an object's member is no element).
func TestValidNextObject(t *testing.T) {
	var docs []string
	for _, n := range []int{0, 1, 2, 61, 62, 63, 64, 65, 125, 126, 127, 9997, 9998, 9999, 10000} {
		open, closing := strings.Repeat("[", n), strings.Repeat("]", n)
		docs = append(docs,
			open+`{"a":1},{"b":2}`+closing,
			open+`{"a":{"c":[]}},{"b":2},{"d":{}}`+closing,
			open+`{"a":1},{"b"`+closing,
			open+`{"a":1},{"b":2},{`+closing,
			open+`{"a":1},{"b":2}}`+closing,
			open+`[{"a":1}],{"b":2}`+closing,
		)
	}
	docs = append(docs, `{},{"a":1}`, `{"a":1},{"b":2}`, `{"x":{"a":1},{"b":2}}`, `{"x":[{"a":1}},{"b":2}]}`)
	for _, doc := range docs {
		b := []byte(doc)
		if got, want := rawjson.Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%.40s…%d bytes) = %v, encoding/json %v", b, len(b), got, want)
		}
		if b[0] == '[' {
			obj := []byte(`{"m":` + doc + `}`)
			if got, want := rawjson.LookupValid(obj, nil) == nil, json.Valid(obj); got != want {
				t.Errorf("LookupValid(%.40s…%d bytes) = %v, encoding/json %v", obj, len(obj), got, want)
			}
		}
	}
}
