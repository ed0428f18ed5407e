package rawjson

import (
	"encoding/binary"
	"testing"
)

// EscapeMask flags exactly the bytes AppendEscaped does not copy as they are, in any position and
// next to any other byte.
func TestEscapeMask(t *testing.T) {
	stops := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80 }
	var w [8]byte
	for c := range 256 {
		for d := range 256 {
			for pos := range 7 {
				w = [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
				w[pos], w[pos+1] = byte(c), byte(d)
				m := EscapeMask(binary.LittleEndian.Uint64(w[:]))
				for k, x := range w {
					if got := m>>(8*k+7)&1 == 1; got != stops(x) || m>>(8*k)&0x7f != 0 {
						t.Fatalf("EscapeMask(%q) = %#x: byte %d", w, m, k)
					}
				}
			}
		}
	}
}
