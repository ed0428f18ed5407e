package sse

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// lineEndReference is lineEnd, a byte at a time.
func lineEndReference(b []byte) int {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

// bothWays runs f with the vector search on, when the machine has it, and
// off.
func bothWays(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := vectorLineEnd
	defer func() { vectorLineEnd = saved }()
	for _, on := range []bool{true, false} {
		if on && !saved {
			continue
		}
		vectorLineEnd = on
		name := "IndexByte"
		if on {
			name = "AVX2"
		}
		t.Run(name, f)
	}
}

// TestLineEnd holds lineEnd to its reference on every length to 140 (the 128-byte loop, the 32-byte one and the last block), with
// "\n" or "\r" (or a byte next to them) at each place, one or two of them,
// at every alignment, and on random bytes.
func TestLineEnd(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		f := func(b []byte) {
			t.Helper()
			if got, want := lineEnd(b), lineEndReference(b); got != want {
				t.Fatalf("lineEnd(%q) = %d, want %d", b, got, want)
			}
		}
		marks := []byte{'\n', '\r', 0x0b, 0x8d}
		for n := range 141 {
			buf := []byte(strings.Repeat("d", n))
			f(buf)
			for at := range n {
				for _, c := range marks {
					buf[at] = c
					f(buf)
					f(buf[at:])
					if at > 0 {
						f(buf[1:]) // another alignment
					}
					buf[n-1-at/2] = '\r' // a second one, after or before
					f(buf)
					buf[n-1-at/2] = 'd'
				}
				buf[at] = 'd'
			}
		}
		rnd := rand.New(rand.NewPCG(3, 4))
		for range 20000 {
			b := make([]byte, rnd.IntN(400))
			for i := range b {
				b[i] = byte(rnd.IntN(95) + 32)
				if rnd.IntN(150) == 0 {
					b[i] = "\r\n"[rnd.IntN(2)]
				}
			}
			f(b)
		}
	})
}

// TestNextLikeMixed holds Next, and so its one-line case and nextMixed
// stepping with lineEnd, to nextMixedScan, which frames any event by
// itself with IndexByte, on random events of short lines with every kind
// of line ending, both ways.
func TestNextLikeMixed(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		rnd := rand.New(rand.NewPCG(5, 6))
		parts := []string{"data: ", "event: a", strings.Repeat("x", 40), "y", ":", "\n", "\r", "\r\n", "\n\n", "\r\n\r\n", "\r\r"}
		for range 50000 {
			var sb strings.Builder
			for range rnd.IntN(8) {
				sb.WriteString(parts[rnd.IntN(len(parts))])
			}
			b := []byte(sb.String())
			if got, want := Next(b), nextMixedScan(b); got != want {
				t.Fatalf("Next(%q) = %d, nextMixedScan: %d", b, got, want)
			}
		}
	})
}
