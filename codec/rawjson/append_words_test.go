package rawjson

import (
	"strings"
	"testing"
)

// TestAppendStringAroundWords: every length around the words AppendEscaped
// reads (its last one overlapping the word before), with a byte to escape
// or to check as UTF-8 (or 0x7f, which needs nothing) at every place, is
// written as the byte-by-byte reference writes it.
func TestAppendStringAroundWords(t *testing.T) {
	for n := range 25 {
		plain := strings.Repeat("abcdefgh", 4)[:n]
		for i := -1; i < n; i++ {
			for _, c := range []string{`"`, `\`, "\x00", "\x1f", "\x7f", "\x80", "é"[:1], "é"} {
				s := plain
				if i >= 0 {
					s = plain[:i] + c + plain[i+1:]
				}
				if got, want := string(AppendString(nil, s)), string(appendStringRef(nil, s)); got != want {
					t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
				}
			}
		}
	}
}
