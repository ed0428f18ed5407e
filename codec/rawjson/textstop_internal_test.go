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
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return i
}

// TestTextStop holds TextStop to its reference, and what it steps over to
// utf8.Valid, on every length to 100, each with a stopping byte, a byte
// next to them or a UTF-8 sequence (valid or not, cut short or not, four
// bytes overlong, above U+10FFFF or led by 0xf5 to 0xff among them) at each
// place, so across a block's end and at the input's, from two alignments,
// with a sequence at another place, and on random texts.
func TestTextStop(t *testing.T) {
	if !TextStopVector {
		t.Skip("no vector TextStop on this machine")
	}
	f := func(b []byte) { checkTextStop(t, b) }
	marks := []string{`"`, `\\`, "\x00", "\x01", "\n", "\x1f", " ", "!", "#", "[", "]", "\x7f", "\x80", "\x9f", "\xff",
		"°", "\xc2\x80", "\xdf\xbf", "\xc1\xbf", "\xc2", "\xc2\x7f", "\xc2\xc2", "’", "\xe0\xa0\x80", "\xe0\x9f\xbf",
		"\xed\x9f\xbf", "\xed\xa0\x80", "\xef\xbf\xbd", "\xe2\x80", "\xe2\x80\x7f", "\xe2\xc0\x80", "😀", "\xf4\x90\x80\x80",
		"\xf0\x90\x80\x80", "\xf0\x8f\xbf\xbf", "\xf0\x80\x80\x80", "\xf4\x8f\xbf\xbf", "\xf3\xbf\xbf\xbf", "\xf1\x80\x80\x80",
		"\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80", "\xff\xbf\xbf\xbf", "\xf0\x9f\x98", "\xf0\x9f", "\xf0", "\xf0\x9f\x98\x7f",
		"\xf0\x9f\xc0\x80", "\xf0\x7f\x98\x80", "\xf4\xc0\x80\x80", "🧥🌡️"}
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
	pieces := []string{"a", "plain text, ", "°", "é", "’", "—", "😀", "🧥", "\U0010ffff", "\xe2", "\x80", "\xed\xa0\x80", `"`, `\\`, "\n",
		"\xf0", "\xf0\x9f", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5", "\xff"}
	for range 20000 {
		var sb strings.Builder
		for range rnd.IntN(60) {
			sb.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		f([]byte(sb.String()))
	}
}

// checkTextStop holds TextStop(b) to its reference, and what it steps
// over to utf8.Valid.
func checkTextStop(t *testing.T, b []byte) {
	t.Helper()
	got := TextStop(b)
	if want := textStopReference(b); got != want {
		t.Fatalf("TextStop(%q) = %d, want %d", b, got, want)
	}
	if !utf8.Valid(b[:got]) {
		t.Fatalf("TextStop(%q) = %d: invalid UTF-8 stepped over", b, got)
	}
}

// FuzzTextStop holds TextStop to its reference, whatever the bytes.
func FuzzTextStop(f *testing.F) {
	if !TextStopVector {
		f.Skip("no vector TextStop on this machine")
	}
	for _, s := range []string{strings.Repeat("plain ", 6) + "😀 and °" + strings.Repeat("x", 40),
		strings.Repeat("a", 30) + "\xf0\x9f\x98\x80" + strings.Repeat("b", 40), strings.Repeat("\xf4\x8f\xbf\xbf", 20)} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkTextStop)
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
