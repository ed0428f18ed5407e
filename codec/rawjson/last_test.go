package rawjson_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

var lastCases = []string{
	`{"a":1,"a":2}`, `{"a":{"x":1,"y":2},"\u0061":{"x":3}}`, `{"a":1,"b":{"c":1,"c":[{"d":1,"d":2}]},"a":null}`,
	`{"us\u0061ge":{"n":1,"n":2},"usage":{"n\u0031":3,"n1":4}}`, `{}`, `{"a":[1,2],"b":"s\"t"}`, `[1,{"a":1,"a":2}]`, `null`,
	`{ "a" : 1 , "a" : { "b" : 2 , "b" : 3 } }`, `{"é":1,"\u00e9":2,"\u00E9":3}`,
}

// TestAppendLast: what AppendLast makes of a value reads as the value
// reads under encoding/json (the last of a repeated key), has no key
// repeated in objects nested through objects (Repeats), so a parser that
// takes the first of a key reads it alike, and Repeats tells the values
// that had one.
func TestAppendLast(t *testing.T) {
	for _, in := range lastCases {
		out := rawjson.AppendLast(nil, []byte(in))
		var want, got any
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("AppendLast(%s) = %s, which reads %v; want %v", in, out, got, want)
		}
		if rawjson.Repeats(out) {
			t.Errorf("AppendLast(%s) = %s repeats a key", in, out)
		}
		if wantRepeats := string(out) != compact(t, in); rawjson.Repeats([]byte(in)) != wantRepeats && in[0] == '{' {
			t.Errorf("Repeats(%s) = %v", in, !wantRepeats)
		}
	}
}

// compact is in without its whitespace.
func compact(t *testing.T, in string) string {
	var m []byte
	m, err := json.Marshal(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	return string(m)
}

// TestLastKeys: the last member of each key, decoded, and Again for a key
// named twice or with escapes.
func TestLastKeys(t *testing.T) {
	b := []byte(` {"a":1,"b":{"a":9},"\u0061":2,"c":3,"c":4}`)
	keys := []rawjson.Last{{Key: "a"}, {Key: "b"}, {Key: "c"}, {Key: "d"}}
	if end := rawjson.LastKeys(b, 1, keys); end != len(b) {
		t.Errorf("LastKeys end %d, want %d", end, len(b))
	}
	for i, want := range []struct {
		v     string
		again bool
	}{{"2", true}, {`{"a":9}`, false}, {"4", true}, {"", false}} {
		k := keys[i]
		got := ""
		if k.At >= 0 {
			got = string(b[k.At : k.At+len(want.v)])
		}
		if got != want.v || k.Again != want.again || want.v == "" && k.At != -1 {
			t.Errorf("%s: at %d (%q), again %v; want %q, %v", k.Key, k.At, got, k.Again, want.v, want.again)
		}
	}
}
