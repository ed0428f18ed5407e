package rawjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // key=value pairs
		end  int      // -1: broken
	}{
		{`{}`, nil, 2},
		{` { } tail`, nil, 4},
		{`{"a":1,"b" : {"c":[1,2]} , "d":null}`, []string{"a=1", "b={\"c\":[1,2]}", "d=null"}, 36},
		{"{\n  \"k\\u0065y\": \"v\\n\"\n}", []string{`k\u0065y="v\n"`}, 23},
		{`{"a":{}`, []string{"a={}"}, -1},
		{`{"a":1`, []string{"a=1"}, -1},
		{`{"a":1,}`, []string{"a=1"}, -1},
		{`{"a" 1}`, nil, -1},
		{`{"a":01}`, []string{"a=0"}, -1},
		{`{"a":0,"b":120,"c":-0,"d":12.5,"e":1e3,"f":7 }`, []string{"a=0", "b=120", "c=-0", "d=12.5", "e=1e3", "f=7"}, 46},
		{`{"a":00}`, []string{"a=0"}, -1},
		{`{"a":12x}`, []string{"a=12"}, -1},
		{`{"a":1.}`, nil, -1},
		{`{"a":"` + "\x01" + `"}`, nil, -1},
		{`{,}`, nil, -1},
		{`[]`, nil, -1},
		{``, nil, -1},
		{`{"a":1]`, []string{"a=1"}, -1},
	} {
		m := Members([]byte(c.in))
		var got []string
		for m.Next() {
			got = append(got, string(m.Key())+"="+string(m.Value()))
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: members %q, want %q", c.in, got, c.want)
		}
		for i := range min(len(got), len(c.want)) {
			if got[i] != c.want[i] {
				t.Errorf("%q: member %d %q, want %q", c.in, i, got[i], c.want[i])
			}
		}
		if end := m.End(); end != c.end || (m.Err() == nil) != (c.end >= 0) {
			t.Errorf("%q: end %d, err %v; want end %d", c.in, end, m.Err(), c.end)
		}
		if m.Next() {
			t.Errorf("%q: Next after the end", c.in)
		}
	}
}

// A document is read whole without an error exactly when it is a valid
// JSON object, as encoding/json sees it; every member Next yields is one.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[true,{"c":null}]}`, `{"a":"\u00e9"}`, `{"a":1,}`, `{"a" :-0.5e3 }`, `[1]`,
		`{"k\u0065y":1,"key":{"a":[]},"ab":"x"}`, `{"a":1 , "bb" : 2 }x`, `{"a":"\q"}`, `{"a`, `{"a":`, `{"a":{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := Members(b)
		n := 0
		for m.Next() {
			n++
			if !json.Valid(m.Value()) {
				t.Fatalf("%q: member value %q is not JSON", b, m.Value())
			}
		}
		end := m.End()
		if end >= 0 { // a checked object is passed over as it is read
			p := Members(b)
			for p.NextKey() && p.PassValue() {
				n--
			}
			if n != 0 || p.End() != end {
				t.Fatalf("%q: PassValue ends at %d with %d members left, Next at %d", b, p.End(), n, end)
			}
		}
		objectAgrees(t, b, end)
		var obj map[string]json.RawMessage
		valid := end >= 0 && json.Unmarshal(b[:end], &obj) == nil
		if (end >= 0) != valid {
			t.Fatalf("%q: end %d, err %v; encoding/json: valid object %v", b, end, m.Err(), valid)
		}
	})
}

// PassValue passes over what Next would, in a valid document.
func TestPassValue(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b" : {"c":[1,"]}",{"d":"\"}"}]} , "e":null,"f":-1.5e3,"g":"x\\"}`,
		`{"output":[{"content":[{"text":"a ] b } c"}]}],"status":"completed"}`,
		`{}`,
	} {
		next, pass := Members([]byte(in)), Members([]byte(in))
		for next.Next() {
			if !pass.NextKey() || !pass.PassValue() || string(pass.Value()) != string(next.Value()) {
				t.Fatalf("%s: PassValue %q, Next %q", in, pass.Value(), next.Value())
			}
		}
		if pass.NextKey() || pass.End() != next.End() {
			t.Errorf("%s: end %d, want %d", in, pass.End(), next.End())
		}
	}
	for _, in := range []string{`{"a":"x`, `{"a":[1,{"b":2}`, `{"a":`} {
		m := Members([]byte(in))
		for m.NextKey() && m.PassValue() {
		}
		if m.Err() == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

// TestCount: Count reads 1 to 18 digits and agrees with strconv on what
// it reads.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		in     string
		n, end int
	}{
		{"0", 0, 1}, {"01", 0, 1}, {"7", 7, 1}, {"42,", 42, 2}, {"999999999999999999", 999999999999999999, 18},
		{"1000000000000000000", 0, -1}, {"-1", 0, -1}, {"", 0, -1}, {"x", 0, -1}, {"12.5", 12, 2},
	} {
		if n, end := Count([]byte(c.in), 0); n != c.n || end != c.end {
			t.Errorf("Count(%q) = %d, %d; want %d, %d", c.in, n, end, c.n, c.end)
		}
	}
}

// objectAgrees holds Object to MemberReader on b, which Members ends at
// end: the same end, the same members visited, their values checked by
// Object or by the visitor (CheckValue) alike, and of the keys of length
// 1 only those and the keys with escapes visited when lens says so.
func objectAgrees(t *testing.T, b []byte, end int) {
	t.Helper()
	var want []string // key@value offset of each member Next yields, then of those of 1 byte (modulo 64, as KeyLengths has it) or escaped
	var short []string
	for m := Members(b); m.Next(); {
		kv := string(m.Key()) + "@" + strconv.Itoa(m.ValueStart())
		want = append(want, kv)
		if len(m.Key())&63 == 1 || bytes.IndexByte(m.Key(), '\\') >= 0 {
			short = append(short, kv)
		}
	}
	for _, c := range []struct {
		lens  uint64
		check bool
		want  []string
	}{{^uint64(0), false, want}, {^uint64(0), true, want}, {KeyLengths("x"), true, short}} {
		var got []string
		e := Object(b, 1, c.lens, func(k []byte, v int, plain bool) int {
			if plain == (bytes.IndexByte(k, '\\') >= 0) {
				t.Fatalf("%q: key %q plain %v", b, k, plain)
			}
			got = append(got, string(k)+"@"+strconv.Itoa(v))
			if c.check {
				return CheckValue(b, v, 1)
			}
			return 0
		})
		if e != end && !(e < 0 && end < 0) {
			t.Fatalf("%q: Object ends at %d, Members at %d", b, e, end)
		}
		if end >= 0 && !slices.Equal(got, c.want) {
			t.Fatalf("%q: Object visits %q, want %q", b, got, c.want)
		}
	}
}

// TestObjectDepth: Object holds the values of an object depth levels deep
// to what is left of encoding/json's nesting limit.
func TestObjectDepth(t *testing.T) {
	visit := func([]byte, int, bool) int { return 0 }
	nest := func(n int) []byte {
		return []byte(`{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
	}
	if end := Object(nest(9999), 1, 0, visit); end < 0 {
		t.Errorf("10000 levels at depth 1: %d", end)
	}
	if end := Object(nest(9998), 2, 0, visit); end < 0 {
		t.Errorf("10000 levels at depth 2: %d", end)
	}
	if end := Object(nest(9999), 2, 0, visit); end >= 0 {
		t.Errorf("10001 levels at depth 2: %d", end)
	}
}
