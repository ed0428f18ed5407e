package rawjson

import (
	"strings"
	"testing"
)

// TestPlain: Plain reports exactly the strings with no byte to escape or
// to check as UTF-8, which AppendEscaped appends as they are; every
// length around the words, with such a byte (or 0x7f, which needs
// nothing) at every place.
func TestPlain(t *testing.T) {
	f := func(s string) {
		t.Helper()
		want := !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r >= 0x80 || r == '"' || r == '\\' })
		if got := Plain(s); got != want {
			t.Errorf("Plain(%q) = %v, want %v", s, got, want)
		}
		if want && string(AppendEscaped(nil, s)) != s {
			t.Errorf("AppendEscaped(%q) = %q, not the string itself", s, AppendEscaped(nil, s))
		}
	}
	for n := range 25 {
		plain := strings.Repeat("abcdefgh", 4)[:n]
		f(plain)
		for i := range n {
			for _, c := range []string{`"`, `\`, "\x00", "\x1f", "\x7f", "\x80", "é"[:1]} {
				f(plain[:i] + c + plain[i+1:])
			}
		}
	}
}
