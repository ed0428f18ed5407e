package anthropic

import (
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// TestAppendStringMatchesRawjson: the fast path writes what
// rawjson.AppendString writes, for every kind of byte at every offset.
func TestAppendStringMatchesRawjson(t *testing.T) {
	f := func(s string) {
		t.Helper()
		if got, want := string(appendString(nil, s)), string(rawjson.AppendString(nil, s)); got != want {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
	pieces := []string{"", "a", "plain ascii text ", "\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
		"é", "日本", "\U0001F600", "\xff", "\xe2\x82", "\u2028", "</script>"}
	for _, p := range pieces {
		for pad := 0; pad < 17; pad++ {
			f(strings.Repeat("x", pad) + p)
			f(p + strings.Repeat("y", pad))
			f(strings.Repeat("z", pad) + p + strings.Repeat("w", 9) + p)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Add("\xff\xfe日本\x01")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), string(rawjson.AppendString(nil, s)); got != want {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}
