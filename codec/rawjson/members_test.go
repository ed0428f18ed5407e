package rawjson

import (
	"encoding/json"
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
	for _, s := range []string{`{}`, `{"a":1,"b":[true,{"c":null}]}`, `{"a":"\u00e9"}`, `{"a":1,}`, `{"a" :-0.5e3 }`, `[1]`} {
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

// TestCount: a member's count is read as it is checked, for 1 to 18
// digits that a separator follows; any other value, a number included,
// has none, and Count agrees with strconv on what it reads.
func TestCount(t *testing.T) {
	doc := `{"a":0,"b":120,"c":-3,"d":12.5,"e":1e3,"f":"7","g":123456789012345678,` +
		`"h":1234567890123456789,"i":null,"j":[4],"k":7 }`
	want := map[string]int{"a": 0, "b": 120, "g": 123456789012345678}
	m := Members([]byte(doc))
	for m.Next() {
		n, ok := m.Count()
		w, wantOK := want[string(m.Key())]
		if ok != wantOK || n != w && ok {
			t.Errorf("%s: Count() = %d, %v; want %d, %v", m.Key(), n, ok, w, wantOK)
		}
	}
	if m.Err() != nil {
		t.Fatal(m.Err())
	}
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
