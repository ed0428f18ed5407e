package rawjson

import (
	"fmt"
	"strconv"
	"testing"
)

// hex4 reads every four-digit code unit in both cases as strconv does, and
// refuses a non-digit byte in each digit's place and a short input.
func TestHex4(t *testing.T) {
	for u := range 1 << 16 {
		for _, s := range []string{fmt.Sprintf("%04x", u), fmt.Sprintf("%04X", u)} {
			if got := hex4([]byte(s)); got != rune(u) {
				t.Fatalf("hex4(%q) = %d, want %d", s, got, u)
			}
		}
	}
	for pos := range 4 {
		for c := range 256 {
			s := []byte("3c0D")
			s[pos] = byte(c)
			want := rune(-1)
			if v, err := strconv.ParseUint(string(s), 16, 16); err == nil {
				want = rune(v)
			}
			if got := hex4(s); got != want {
				t.Fatalf("hex4(%q) = %d, want %d", s, got, want)
			}
		}
	}
	for _, s := range []string{"", "0", "00", "000"} {
		if got := hex4([]byte(s)); got != -1 {
			t.Fatalf("hex4(%q) = %d, want -1", s, got)
		}
	}
}
