package rawjson

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// plainRunReference is what plainRun returns, a byte at a time.
func plainRunReference(b []byte) int {
	whole := len(b) &^ 31
	for i, c := range b[:whole] {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return whole
}

// TestPlainRun holds plainRun to its reference on every length to 200, each
// with a flagged byte or one next to them (0x20, 0x21, '#', '[', ']', and
// bytes with the high bit set) at each place, and on random bytes.
func TestPlainRun(t *testing.T) {
	if !vectorRuns {
		t.Skip("no vector plainRun on this machine")
	}
	f := func(b []byte) {
		t.Helper()
		if got, want := plainRun(b), plainRunReference(b); got != want {
			t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
		}
	}
	bytes := []byte{'"', '\\', 0, 1, 0x0a, 0x1f, 0x20, 0x21, '#', '[', ']', 0x7f, 0x80, 0x9f, 0xa2, 0xdc, 0xff}
	for n := range 201 {
		buf := []byte(strings.Repeat("a", n))
		f(buf)
		for at := range n {
			for _, c := range bytes {
				buf[at] = c
				f(buf)
				f(buf[at:]) // another alignment
			}
			buf[at] = 'a'
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rnd.IntN(300))
		for i := range b {
			b[i] = byte(rnd.IntN(224) + 32) // mostly plain text
			if rnd.IntN(200) == 0 {
				b[i] = byte(rnd.IntN(256))
			}
		}
		f(b)
	}
}

// bothWays runs f with the vector search on, when the machine has it, and
// off: the two must agree.
func bothWays(t *testing.T, f func(way string)) {
	t.Helper()
	was := vectorRuns
	defer func() { vectorRuns = was }()
	for _, on := range []bool{was, false} {
		vectorRuns = on
		f(map[bool]string{true: "vector", false: "words"}[on])
	}
}

// TestLongStringBothWays: Valid and stringEnd read long strings alike with
// and without the vector search, as encoding/json does, whatever lies
// where: a control character, a quote, a backslash, an escape or a
// non-ASCII byte at each place of strings to 300 bytes, after heads that
// leave the vector search at each alignment.
func TestLongStringBothWays(t *testing.T) {
	for _, head := range []string{"", strings.Repeat("x", 49), strings.Repeat(`ab\n`, 20), strings.Repeat("y", 70) + `\t`} {
		for n := 40; n <= 300; n += 7 {
			text := []byte(strings.Repeat("a", n))
			for at := 0; at < n; at += 3 {
				for _, c := range []string{"\x01", "\x1f", `"`, `\`, `\u00e9`, `\"`, "\xc3\xa9", "\x7f"} {
					doc := []byte(`{"k":"` + head + string(text[:at]) + c + string(text[at+1:]) + `"}`)
					want := json.Valid(doc)
					bothWays(t, func(way string) {
						if got := Valid(doc); got != want {
							t.Fatalf("%s: Valid(%q) = %v, encoding/json says %v", way, doc, got, want)
						}
						if end, _ := stringEnd(doc, 6); (end == len(doc)-1) != want {
							t.Fatalf("%s: stringEnd(%q, 6) = %d", way, doc, end)
						}
					})
				}
			}
		}
	}
}
