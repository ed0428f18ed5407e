package rawjson

import (
	"fmt"
	"testing"
)

// BMPEscape reads what DecodeEscape reads of every \uXXXX escape that is
// not a surrogate, and declines the rest: every code unit in both cases,
// and every byte in each digit's place.
func TestBMPEscape(t *testing.T) {
	for u := range 1 << 16 {
		checkBMPEscape(t, fmt.Appendf(nil, `\u%04x`, u))
		checkBMPEscape(t, fmt.Appendf(nil, `\u%04X"`, u))
	}
	for pos := 1; pos < 6; pos++ {
		for c := range 256 {
			s := []byte(`\u3c0D`)
			s[pos] = byte(c)
			checkBMPEscape(t, s)
		}
	}
	for _, s := range []string{`\u00`, `\u`, `\`, `\n0000`, `\"`, `\ud83d\ude00`} {
		checkBMPEscape(t, []byte(s))
	}
}

func checkBMPEscape(t *testing.T, s []byte) {
	t.Helper()
	r, n, lone := DecodeEscape(s)
	want := rune(-1)
	if n == 6 && !lone {
		want = r
	}
	if got := BMPEscape(append([]byte("x"), s...), 1); got != want {
		t.Fatalf("BMPEscape(%q) = %d, want %d", s, got, want)
	}
}
