package rawjson

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// textStopReference is what TextStop returns, a byte at a time.
func textStopReference(b []byte) int {
	whole := len(b) &^ 31
	for i, c := range b[:whole] {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return whole
}

// TestTextStop holds TextStop to its reference on every length to 200, each
// with a flagged byte, a high one or one next to them at each place, a
// high byte at another, and on random bytes.
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
	marks := []byte{'"', '\\', 0, 1, 0x0a, 0x1f, 0x20, 0x21, '#', '[', ']', 0x7f, 0x80, 0x9f, 0xa2, 0xc2, 0xdc, 0xff}
	for n := range 201 {
		buf := []byte(strings.Repeat("a", n))
		f(buf)
		for at := range n {
			for _, c := range marks {
				buf[at] = c
				f(buf)
				f(buf[at:]) // another alignment
				other := (at * 7) % n
				saved := buf[other]
				buf[other] = 0xb0 // a high byte before, at or after it
				f(buf)
				buf[other] = saved
			}
			buf[at] = 'a'
		}
	}
	rnd := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		b := make([]byte, rnd.IntN(300))
		for i := range b {
			b[i] = byte(rnd.IntN(95) + 32) // mostly plain text
			if rnd.IntN(100) == 0 {
				b[i] = byte(rnd.IntN(256))
			}
		}
		f(b)
	}
}
