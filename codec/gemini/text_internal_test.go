package gemini

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainRunReference is plainRun, a byte at a time.
func plainRunReference(b []byte, i int) (end int, valid bool) {
	end = len(b)
	for j := i; j < len(b); j++ {
		if c := b[j]; c == '"' || c == '\\' || c < 0x20 {
			end = j
			break
		}
	}
	return end, utf8.Valid(b[i:end])
}

// TestPlainRun holds plainRun, with the vector search (when the machine
// has it) and without, to its reference: on every length to 80 with a
// stopping byte, a UTF-8 sequence (valid or not, cut short or not) or
// both at each place, from several offsets, and on random texts.
func TestPlainRun(t *testing.T) {
	saved := vectorText
	defer func() { vectorText = saved }()
	for _, on := range []bool{true, false} {
		if on && !saved {
			continue
		}
		vectorText = on
		f := func(b []byte, i int) {
			t.Helper()
			end, valid := plainRun(b, i)
			if wantEnd, wantValid := plainRunReference(b, i); end != wantEnd || valid != wantValid {
				t.Fatalf("vector %v: plainRun(%q, %d) = %d, %v, want %d, %v", on, b, i, end, valid, wantEnd, wantValid)
			}
		}
		marks := []string{`"`, `\`, "\x00", "\n", "\x1f", " ", "\x7f", "°", "’", "😀", "\xc2", "\xe2\x80",
			"\xf0\x9f\x98", "\x80", "\xff", "\xc0\xaf", "\xed\xa0\x80", "°\"", "’\\",
			"\U0010ffff", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "😀\""}
		for n := range 81 {
			base := strings.Repeat("a", n)
			for at := 0; at <= n; at++ {
				for _, m := range marks {
					b := []byte(base[:at] + m + base[at:])
					for _, i := range []int{0, 1, 33} {
						if i <= len(b) {
							f(b, i)
						}
					}
					b = []byte(base[:at] + "é" + base[at:] + m) // a sequence before the stop
					f(b, 0)
				}
			}
		}
		rnd := rand.New(rand.NewPCG(9, 10))
		pieces := []string{"a", "plain text ", "°", "é", "’", "😀", "🧥", "\xe2", "\x80", "\xf0\x9f", "\xf4\x90\x80\x80", `"`, `\`, "\n"}
		for range 20000 {
			var sb strings.Builder
			for range rnd.IntN(40) {
				sb.WriteString(pieces[rnd.IntN(len(pieces))])
			}
			b := []byte(sb.String())
			f(b, rnd.IntN(len(b)+1))
		}
	}
}
