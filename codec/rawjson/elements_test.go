package rawjson

import (
	"encoding/json"
	"testing"
)

func TestElements(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		end  int // -1: broken
	}{
		{`[]`, nil, 2},
		{` [ ] tail`, nil, 4},
		{`[1, "a\n" ,{"b":[2]},null]`, []string{"1", `"a\n"`, `{"b":[2]}`, "null"}, 26},
		{`[1`, []string{"1"}, -1},
		{`[1,]`, []string{"1"}, -1},
		{`[,1]`, nil, -1},
		{`[1 2]`, []string{"1"}, -1},
		{`[01]`, []string{"0"}, -1},
		{`["` + "\x01" + `"]`, nil, -1},
		{`[1}`, []string{"1"}, -1},
		{`{}`, nil, -1},
		{``, nil, -1},
	} {
		a := Elements([]byte(c.in))
		var got []string
		for a.Next() {
			got = append(got, string(a.Value()))
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: elements %q, want %q", c.in, got, c.want)
		}
		for i := range min(len(got), len(c.want)) {
			if got[i] != c.want[i] {
				t.Errorf("%q: element %d %q, want %q", c.in, i, got[i], c.want[i])
			}
		}
		if end := a.End(); end != c.end || (a.Err() == nil) != (c.end >= 0) {
			t.Errorf("%q: end %d, err %v; want end %d", c.in, end, a.Err(), c.end)
		}
		if a.Next() {
			t.Errorf("%q: Next after the end", c.in)
		}
	}
}

// An array is read whole without an error exactly when it is a valid JSON
// array, as encoding/json sees it; every element Next yields is JSON.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1,{"a":[true,null]}]`, `["\u00e9"]`, `[1,]`, `[ -0.5e3 ]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a := Elements(b)
		for a.Next() {
			if !json.Valid(a.Value()) {
				t.Fatalf("%q: element %q is not JSON", b, a.Value())
			}
		}
		end := a.End()
		var arr []json.RawMessage
		valid := end >= 0 && json.Unmarshal(b[:end], &arr) == nil
		if (end >= 0) != valid {
			t.Fatalf("%q: end %d, err %v; encoding/json: valid array %v", b, end, a.Err(), valid)
		}
	})
}

func TestCheckString(t *testing.T) {
	for _, c := range []struct {
		in    string
		end   int
		plain bool
	}{
		{`"" x`, 2, true},
		{`"abcdefghijklmnopq" `, 19, true},
		{`"abcdefgh\"ijklmnopq"`, 21, false},
		{`"é"`, 4, false},
		{`"abcdeé"xxxxxxxx`, 9, false},               // non-ASCII in the word that ends the string
		{`"abc"é.........`, 5, true},                 // non-ASCII after the end, in the same word
		{`"abcdefghé12345678\n12345678"`, 30, false}, // read on past non-ASCII, then an escape
		{`"\n12345678é12345678abcdefgh"`, 30, false}, // an escape, then non-ASCII a word further
		{"\"abcdefghé1234567\x01\"", -1, false},      // a control character past non-ASCII
		{"\"ab\xffc\"", 6, false},
		{`"a\u00e9"`, 9, false},
		{`"a\x"`, -1, false},
		{"\"a\x01\"", -1, false},
		{`"abcdefghijklmnop`, -1, false},
		{`x"`, -1, false},
		{``, -1, false},
	} {
		if end, plain := CheckString([]byte(c.in), 0); end != c.end || plain != c.plain {
			t.Errorf("CheckString(%q) = %d, %v; want %d, %v", c.in, end, plain, c.end, c.plain)
		}
	}
}

// A string is checked exactly as encoding/json checks it, and called
// plain only when it decodes to itself.
func FuzzCheckString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"é"`, "\"\x7f\"", `"\ud800"`, `"abcdefgh`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end, plain := CheckString(b, 0)
		var s string
		valid := json.Unmarshal(b[:max(end, 0)], &s) == nil
		if (end >= 0) != valid {
			t.Fatalf("%q: end %d; encoding/json: valid %v", b, end, valid)
		}
		if plain && s != string(b[1:end-1]) {
			t.Fatalf("%q: plain, but decodes to %q", b, s)
		}
	})
}
