package rawjson

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// walkSteps walks the object at the start of b with the steps of
// answer_members.go, each key read by KeyEnd and, where t knows it, by
// t.Match, which must agree: end is just past the object, -1 when it is
// not one; keys are the indices Match gave, -1 for a key it did not know.
func walkSteps(tb testing.TB, b []byte, t *KeyTable, depth int) (end int, keys []int) {
	i, closed := OpenObject(b, 0)
	for !closed {
		if i < 0 || i >= len(b) || b[i] != '"' {
			return -1, keys
		}
		ke, plain := KeyEnd(b, i+1)
		k, mend := t.Match(b, i+1)
		if k >= 0 && (mend != ke || !plain) {
			tb.Fatalf("%q: Match at %d = %d, %d; KeyEnd %d, %v", b, i+1, k, mend, ke, plain)
		}
		keys = append(keys, k)
		v := MemberValue(b, ke)
		if v < 0 {
			return -1, keys
		}
		i, closed = NextMember(b, CheckValue(b, v, depth))
	}
	return i, keys
}

var usageTable = NewKeyTable("prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details", "total_tokens")

func TestObjectSteps(t *testing.T) {
	for _, c := range []struct {
		in   string
		end  int
		keys []int
	}{
		{`{}`, 2, nil},
		{` { } x`, 4, nil},
		{`{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`, 58, []int{0, 1, 4}},
		{"{\n \"prompt_tokens_details\" : {\"a\":1},\n\t\"completion_tokens_details\":null\r}", 73, []int{2, 3}},
		{`{"prompt_tokens_x":1,"prompt_token":2,"prompt_tokens_detail":3,"pr\u006fmpt_tokens":4,"total_tokens":5}`, 103, []int{-1, -1, -1, -1, 4}},
		{`{"prompt_tokens":1,}`, -1, []int{0}},
		{`{"prompt_tokens" 1}`, -1, []int{0}},
		{`{"prompt_tokens":1 "total_tokens":2}`, -1, []int{0}},
		{`{"prompt_tokens":`, -1, []int{0}},
		{`{"prompt_tokens"`, -1, []int{0}},
		{`{"prompt_tokens`, -1, []int{-1}},
		{`{"prompt_t`, -1, []int{-1}},
		{"{\"\x00\x00\x00\x00\x00\x00\x00\x00\":1}", -1, []int{-1}},
		{`{,}`, -1, nil},
		{`[]`, -1, nil},
		{``, -1, nil},
	} {
		end, keys := walkSteps(t, []byte(c.in), usageTable, 1)
		if end != c.end || !slices.Equal(keys, c.keys) {
			t.Errorf("%q: end %d, keys %v; want %d, %v", c.in, end, keys, c.end, c.keys)
		}
		if want := Object([]byte(c.in), 1, 0, func([]byte, int, bool) int { return 0 }); end != want {
			t.Errorf("%q: end %d, Object's %d", c.in, end, want)
		}
	}
}

// TestKeyTableRefuses: keys that a table cannot hold are refused when
// it is made.
func TestKeyTableRefuses(t *testing.T) {
	for _, keys := range [][]string{
		{"short"}, {strings.Repeat("k", 32)}, {"with\"quote"}, {"with\\backslash"}, {"control\x01key"}, {"non-ascii é"},
		{"same_first_1", "same_first_2", "same_first_3"},
		{"key_one_1", "key_two_2", "key_three", "key_four_", "key_five_", "key_six_6", "key_seven", "key_eight", "key_nine_"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewKeyTable(%q) did not panic", keys)
				}
			}()
			NewKeyTable(keys...)
		}()
	}
	// Two keys alike in their first 8 bytes are each found.
	tab := NewKeyTable("same_first_1", "same_first_22", "other_key")
	for k, s := range []string{`same_first_1"`, `same_first_22"`, `other_key"`} {
		if got, end := tab.Match([]byte(s+":0"), 0); got != k || end != len(s) {
			t.Errorf("Match(%s) = %d, %d; want %d, %d", s, got, end, k, len(s))
		}
	}
}

// FuzzObjectSteps holds the steps, and KeyTable.Match, to Object: the
// same end on any input, Match's end KeyEnd's.
func FuzzObjectSteps(f *testing.F) {
	for _, s := range []string{`{}`, `{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`,
		`{"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":null}`, `{"a" : 1 , "b":[{}] }`,
		`{"total_tokens":1,}`, `{"total_tokens"`, `{"total_t\u006fkens":1}`, `[1]`} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("testdata/corpus/*.json")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end, _ := walkSteps(t, b, usageTable, 1)
		if want := Object(b, 1, 0, func([]byte, int, bool) int { return 0 }); end != want {
			t.Fatalf("%q: end %d, Object's %d", b, end, want)
		}
	})
}
