package rawjson

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

var usageForm = NewForm(`{"prompt_tokens":#,"completion_tokens":#,"total_tokens":#,`+
	`"prompt_tokens_details":{"cached_tokens":#,"audio_tokens":#},`+
	`"completion_tokens_details":{"reasoning_tokens":#,"audio_tokens":#,"accepted_prediction_tokens":#,"rejected_prediction_tokens":#}}`, 2)

// formCounts is what a walk reads of the form's counts in the object b:
// the value at each count's path, -1 where it is none.
func formCounts(b []byte, f *Form) []int {
	counts := make([]int, f.Counts())
	for c, p := range f.paths {
		v := b
		for _, key := range strings.Split(p, "\x00") {
			keys := []Last{{Key: key}}
			if LastKeys(v, 0, keys) < 0 || keys[0].At < 0 {
				v = nil
				break
			}
			v = v[keys[0].At:]
		}
		n, end := Count(v, 0)
		if end < 0 {
			n = -1
		}
		counts[c] = n
	}
	return counts
}

func TestForm(t *testing.T) {
	compact := `{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":3,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":123456789012345678}}`
	want := []int{19, 10, 29, 0, 0, 3, 0, 0, 123456789012345678}
	spelled := "{\n    \"prompt_tokens\": 19,\n    \"completion_tokens\": 10,\n    \"total_tokens\": 29,\n" +
		"    \"prompt_tokens_details\": {\n      \"cached_tokens\": 0,\n      \"audio_tokens\": 0\n    },\n" +
		"    \"completion_tokens_details\": {\n      \"reasoning_tokens\": 3,\n      \"audio_tokens\": 0,\n" +
		"      \"accepted_prediction_tokens\": 0,\n      \"rejected_prediction_tokens\": 123456789012345678\n    }\n  }"
	// The indented layout is OpenAI's, as its answers (proxy/testdata/chat_response.json) have it.
	var layout strings.Builder
	for i, l := range usageForm.lits {
		layout.WriteString(l.layouts[indented].s)
		if i < len(want) {
			layout.WriteString(strconv.Itoa(want[i]))
		}
	}
	if layout.String() != spelled {
		t.Errorf("the indented layout is\n%s", layout.String())
	}
	python := strings.NewReplacer(`,`, `, `, `:`, `: `).Replace(compact) // json.dumps' separators
	reindented := strings.NewReplacer("\n  ", "\n\t", "\n", "\r\n").Replace(spelled)
	for _, c := range []struct {
		in  string
		end int
	}{
		{compact, len(compact)},
		{compact + `,"x":1}`, len(compact)},
		{spelled, len(spelled)},
		{python, len(python)},
		{reindented, len(reindented)},
		{strings.Replace(spelled, "\n    \"total_tokens\"", "\"total_tokens\"", 1), len(spelled) - 5}, // another layout, partly
		{" \t" + compact + " ", len(compact) + 2},
		{strings.ReplaceAll(compact, `,"`, `, "`), len(compact) + 8},
		{strings.Replace(compact, `"total_tokens"`, `"total_tokens" `, 1), -1},            // whitespace before a colon
		{strings.Replace(compact, `"total_tokens"`, `"t\u006ftal_tokens"`, 1), -1},        // an escape
		{strings.Replace(compact, `19`, `19.0`, 1), -1},                                   // no integer
		{strings.Replace(compact, `19`, `019`, 1), -1},                                    // nor JSON
		{strings.Replace(compact, `19`, `-19`, 1), -1},                                    // no count
		{strings.Replace(compact, `19`, `1234567890123456789`, 1), -1},                    // past 18 digits
		{strings.Replace(compact, `"audio_tokens":0}`, `"audio_tokens":0,"x":1}`, 1), -1}, // another key
		{strings.Replace(compact, `"total_tokens":29,`, ``, 1), -1},                       // a key less
		{compact[:len(compact)-1], -1},
		{compact[:len(compact)-2], -1},
		{compact[:20], -1},
		{``, -1},
	} {
		counts := make([]int, usageForm.Counts())
		end := usageForm.Read([]byte(c.in), 0, counts)
		if end != c.end {
			t.Errorf("Read(%q) = %d, want %d", c.in, end, c.end)
		}
		if end >= 0 && !slices.Equal(counts, want) {
			t.Errorf("Read(%q): counts %v, want %v", c.in, counts, want)
		}
	}
	if c := usageForm.Count("completion_tokens_details", "reasoning_tokens"); c != 5 {
		t.Errorf("Count(completion_tokens_details, reasoning_tokens) = %d", c)
	}
	if c := usageForm.Count("reasoning_tokens"); c != -1 {
		t.Errorf("Count(reasoning_tokens) = %d", c)
	}
	for _, template := range []string{`{"a":#,"a":#}`, `{"a":{"b":#,"b":#}}`, `{"a": #}`, `{"a":[#]}`, `{"a":"#"}`, `{"\u0061":#}`, `[#]`, `{"a":#`, `{"a":#}x`} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewForm(%s) did not panic", template)
				}
			}()
			NewForm(template, 2)
		}()
	}
}

// FuzzForm: an object a Form reads is valid JSON, ends where Object ends,
// names no key twice, and holds at each count's path the count read.
func FuzzForm(f *testing.F) {
	compact := `{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":3,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":1}}`
	f.Add([]byte(compact))
	f.Add([]byte(strings.NewReplacer(`{`, "{\n ", `,`, ",\n\t", `}`, "\r\n}", `:`, ": ").Replace(compact)))
	f.Fuzz(func(t *testing.T, b []byte) {
		counts := make([]int, usageForm.Counts())
		end := usageForm.Read(b, 0, counts)
		if end < 0 {
			return
		}
		if want := Object(b, 1, 0, func([]byte, int, bool) int { return 0 }); end != want {
			t.Fatalf("%q: Read's end %d, Object's %d", b, end, want)
		}
		if Repeats(b[:end]) {
			t.Fatalf("%q: read, and names a key twice", b)
		}
		if want := formCounts(b[:end], usageForm); !slices.Equal(counts, want) {
			t.Fatalf("%q: counts %v, want %v", b, counts, want)
		}
	})
}

// FuzzMayBeSpaced holds mayBeSpaced to spaced: where a literal of the usage
// form is met a token at a time, and in neither layout whole, mayBeSpaced
// lets spaced try it (else Read would walk a usage it could have read).
func FuzzMayBeSpaced(f *testing.F) {
	for _, lit := range usageForm.lits {
		f.Add([]byte(lit.layouts[compact].s))
		f.Add([]byte(lit.layouts[indented].s))
		f.Add([]byte(strings.NewReplacer(`{`, "{\t", `,`, " ,\r\n", `}`, "\n}", `:`, ": ").Replace(lit.layouts[compact].s)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for n := range usageForm.lits {
			lit := &usageForm.lits[n]
			whole := lit.layouts[compact].at(b, 0) || lit.layouts[indented].at(b, 0)
			if !whole && lit.spaced(b, 0) >= 0 && !lit.mayBeSpaced(b, 0) {
				t.Fatalf("%q: literal %d met a token at a time, but mayBeSpaced refuses it", b, n)
			}
		}
	})
}

// TestFormCountWords: Read's count of 1 to 7 digits summed in their word
// (smallValue) is strconv's, whatever follows the digits.
func TestFormCountWords(t *testing.T) {
	for _, n := range []int{1, 9, 10, 19, 99, 100, 305, 1920, 9999, 10000, 65535, 123456, 999999, 1000000, 1234567, 9999999} {
		s := strconv.Itoa(n)
		w := word([]byte(s+"}x,\"abcdefg"), 0)
		if got := smallValue(w, len(s)); got != n {
			t.Errorf("smallValue of %q = %d", s, got)
		}
	}
}
