package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// FuzzLookup checks rawjson against encoding/json: Lookup never panics, accepts every valid
// object unless a requested key is repeated, and finds the same values as encoding/json.
func FuzzLookup(f *testing.F) {
	paths, err := filepath.Glob("../codec/rawjson/testdata/corpus/*.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed corpus: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Short keys, so that the fuzzer can find them, and one that needs UTF-8.
	keys := []string{"model", "stream", "messages", "usage", "choices", "a", "", "é"}

	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64<<10 {
			return
		}
		fields := make([]rawjson.Field, len(keys))
		for i, k := range keys {
			fields[i].Key = k
		}
		err := rawjson.Lookup(b, fields, true)
		var se *rawjson.SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Offset < 0 || se.Offset > len(b)) {
			t.Fatalf("Lookup: %v, want a *SyntaxError within the input", err)
		}
		// all == false may stop early, but must agree wherever all == true succeeds.
		early := slices.Clone(fields)
		if err2 := rawjson.Lookup(b, early, false); err == nil && (err2 != nil || !slices.Equal(early, fields)) {
			t.Fatalf("all=false gave %v, %+v; all=true gave %+v", err2, early, fields)
		}

		if !json.Valid(b) {
			return
		}
		counts, isObject := topLevelKeys(t, b)
		switch {
		case !isObject:
			if err == nil {
				t.Fatal("Lookup accepted a value that is not an object")
			}
			return
		case slices.ContainsFunc(keys, func(k string) bool { return counts[k] > 1 }):
			if err == nil {
				t.Fatal("Lookup accepted a repeated key")
			}
			return
		case err != nil:
			t.Fatalf("Lookup rejected valid JSON: %v", err)
		}

		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
		for _, fl := range fields {
			want, ok := top[fl.Key]
			if !ok {
				if fl.Start != -1 {
					t.Fatalf("%q found at %d, but encoding/json has no such key", fl.Key, fl.Start)
				}
				continue
			}
			if fl.Start < 0 {
				t.Fatalf("%q not found", fl.Key)
			}
			// RawMessage holds the value's exact bytes, so equal spans also decode equally.
			got := b[fl.Start:fl.End]
			if !bytes.Equal(got, want) {
				t.Fatalf("%q: span %q, encoding/json has %q", fl.Key, got, want)
			}
			if rawjson.KindOf(got) != rawjson.KindString {
				continue
			}
			var s string
			if err := json.Unmarshal(got, &s); err != nil {
				t.Fatal(err)
			}
			if u, err := rawjson.AppendUnquote(nil, got); err != nil || string(u) != s {
				t.Fatalf("AppendUnquote(%q) = %q, %v; encoding/json gives %q", got, u, err, s)
			}
			if n, ok := rawjson.RuneCount(got); !ok || n != utf8.RuneCountInString(s) {
				t.Fatalf("RuneCount(%q) = %d, %v; encoding/json's string has %d", got, n, ok, utf8.RuneCountInString(s))
			}
		}
	})
}

// topLevelKeys counts the top-level keys of the valid JSON document b, as encoding/json decodes
// them; isObject is false if b is not an object.
func topLevelKeys(t *testing.T, b []byte) (counts map[string]int, isObject bool) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	counts = make(map[string]int)
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		counts[tok.(string)]++
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return counts, true
}

// FuzzValidStrings checks rawjson.ValidStrings, which looks only at
// backslashes and control characters until it meets a control character,
// against a plain reading that follows the quotes, on every document
// sonic.Valid accepts (its precondition).
func FuzzValidStrings(f *testing.F) {
	paths, _ := filepath.Glob("../codec/rawjson/testdata/corpus/*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"a":"escapes \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00","b":["\\","\""]}`))
	f.Add([]byte("{\n  \"a\": \"line\\nbreak\",\n  \"b\": \"tab\there\"\n}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := rawjson.ValidStrings(b) // never panics, whatever b is
		if !sonic.Valid(b) {
			return
		}
		if want := quotedValidStrings(b); got != want {
			t.Fatalf("ValidStrings(%q) = %v, following the quotes %v", b, got, want)
		}
	})
}

// quotedValidStrings reads the strings of a structurally valid document
// one byte at a time, following the quotes.
func quotedValidStrings(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+5 >= len(b) {
					return false
				}
				for _, h := range b[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				i += 5
			default:
				return false
			}
		case c < 0x20:
			return false
		}
	}
	return !in
}
