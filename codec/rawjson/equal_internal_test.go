package rawjson

import (
	"bytes"
	"testing"
)

// TestEqual holds Equal to bytes.Equal, with the vector compare (when the
// machine has it) and without: at every length to 200, from two
// alignments, on equal bytes and with one byte changed at each place; and
// on slices of different lengths whose common bytes are equal.
func TestEqual(t *testing.T) {
	forEachEqual(t, func(t *testing.T, on bool) {
		a, b := make([]byte, 201), make([]byte, 201)
		for i := range a {
			a[i] = byte(i*7 + 1)
		}
		for n := range 200 {
			for _, off := range []int{0, 1} {
				x, y := a[off:off+n], b[off:off+n]
				copy(y, x)
				checkEqual(t, on, x, y)
				for at := range n {
					y[at] ^= 0x80
					checkEqual(t, on, x, y)
					y[at] ^= 0x80
				}
			}
		}
		checkEqual(t, on, nil, nil)
	})
}

// TestEqualLengths: slices that differ only in length are not equal,
// whichever is longer (the vector compare once took both from the first).
func TestEqualLengths(t *testing.T) {
	forEachEqual(t, func(t *testing.T, on bool) {
		zeros := make([]byte, 100)
		for _, l := range [][2]int{{32, 33}, {64, 40}, {0, 1}, {32, 40}, {40, 32}, {99, 100}} {
			checkEqual(t, on, zeros[:l[0]], zeros[:l[1]])
			checkEqual(t, on, zeros[:l[1]], zeros[:l[0]])
		}
	})
}

// forEachEqual runs check with the vector compare, when the machine has
// it, and without.
func forEachEqual(t *testing.T, check func(t *testing.T, on bool)) {
	saved := vectorEqual
	defer func() { vectorEqual = saved }()
	for _, on := range []bool{true, false} {
		if on && !saved {
			continue
		}
		vectorEqual = on
		check(t, on)
	}
}

// checkEqual fails t when Equal(x, y) is not bytes.Equal(x, y).
func checkEqual(t *testing.T, on bool, x, y []byte) {
	t.Helper()
	if got, want := Equal(x, y), bytes.Equal(x, y); got != want {
		t.Fatalf("vector %v: Equal(%q, %q) = %v, want %v", on, x, y, got, want)
	}
}
