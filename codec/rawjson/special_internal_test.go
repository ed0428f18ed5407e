package rawjson

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecial holds special to its contract on every byte value at every
// position of a word, after plain bytes and before random ones, and on
// random words: its lowest flag is at the first quote, backslash or
// control character, and it sets nothing but high bits.
func TestSpecial(t *testing.T) {
	check := func(w uint64) {
		t.Helper()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		want := 8
		for k, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				want = k
				break
			}
		}
		m := special(w)
		if got := bits.TrailingZeros64(m) >> 3; got != want || m&^0x8080808080808080 != 0 {
			t.Fatalf("special(%q) = %#x: first flag at %d, want %d", b[:], m, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for p := range 8 {
		for x := range 256 {
			for range 8 {
				w := r.Uint64()
				low := uint64(1)<<(8*p) - 1
				w = w&^low | 0x6161616161616161&low // 'a' below p
				w = w&^(0xff<<(8*p)) | uint64(x)<<(8*p)
				check(w)
			}
		}
	}
	for range 1 << 16 {
		check(r.Uint64())
		check(r.Uint64() & 0x7f7f7f7f7f7f7f7f) // ASCII
	}
}
