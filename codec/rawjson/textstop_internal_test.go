package rawjson

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// textStopReference is what TextStop returns, a byte at a time.
func textStopReference(b []byte) int {
	i := 0
	for len(b)-i >= 32 {
		p := -1
		for k, c := range b[i : i+32] {
			if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				p = k
				break
			}
		}
		if p < 0 {
			i += 32
			continue
		}
		if i += p; b[i] < utf8.RuneSelf {
			return i
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || n == 4 {
			return i
		}
		i += n
	}
	return i
}

// TestTextStop holds TextStop to its reference on every length to 100,
// each with a stopping byte, a byte next to them or a UTF-8 sequence
// (valid or not, cut short or not) at each place, from two alignments,
// with a sequence at another place, and on random texts.
func TestTextStop(t *testing.T) {
	if !TextStopVector {
		t.Skip("no vector TextStop on this machine")
	}
	f := func(b []byte) {
		t.Helper()
		if got, want := TextStop(b), textStopReference(b); got != want {
			t.Fatalf("TextStop(%q) = %d, want %d", b, got, want)
		}
	}
	marks := []string{`"`, `\\`, "\x00", "\x01", "\n", "\x1f", " ", "!", "#", "[", "]", "\x7f", "\x80", "\x9f", "\xff",
		"°", "\xc2\x80", "\xdf\xbf", "\xc1\xbf", "\xc2", "\xc2\x7f", "\xc2\xc2", "’", "\xe0\xa0\x80", "\xe0\x9f\xbf",
		"\xed\x9f\xbf", "\xed\xa0\x80", "\xef\xbf\xbd", "\xe2\x80", "\xe2\x80\x7f", "\xe2\xc0\x80", "😀", "\xf4\x90\x80\x80"}
	for n := range 101 {
		base := strings.Repeat("a", n)
		for at := 0; at <= n; at++ {
			for _, m := range marks {
				b := []byte(base[:at] + m + base[at:])
				f(b)
				f(b[1:]) // another alignment
				other := (at*7 + 3) % (n + 1)
				if other <= at { // a sequence before it, or after
					f([]byte(base[:other] + "’" + base[other:at] + m + base[at:]))
				} else {
					f([]byte(base[:at] + m + base[at:other] + "’" + base[other:]))
				}
			}
		}
	}
	rnd := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "plain text, ", "°", "é", "’", "—", "😀", "\xe2", "\x80", "\xed\xa0\x80", `"`, `\\`, "\n"}
	for range 20000 {
		var sb strings.Builder
		for range rnd.IntN(60) {
			sb.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		f([]byte(sb.String()))
	}
}

// TestTextStopOff: without TextStopVector, TextStop returns 0 and runs no
// vector instruction (a CPU without AVX2 would fault on them).
func TestTextStopOff(t *testing.T) {
	saved := TextStopVector
	defer func() { TextStopVector = saved }()
	TextStopVector = false
	if got := TextStop([]byte(strings.Repeat("plain", 20))); got != 0 {
		t.Fatalf("TextStop without TextStopVector = %d, want 0", got)
	}
}
