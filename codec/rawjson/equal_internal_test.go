package rawjson

import (
	"bytes"
	"testing"
)

// TestEqual holds Equal to bytes.Equal, with the vector compare (when the
// machine has it) and without, on every length to 200 with one byte
// changed at each place, or none, from two alignments.
func TestEqual(t *testing.T) {
	saved := vectorEqual
	defer func() { vectorEqual = saved }()
	for _, on := range []bool{true, false} {
		if on && !saved {
			continue
		}
		vectorEqual = on
		a, b := make([]byte, 201), make([]byte, 201)
		for i := range a {
			a[i] = byte(i*7 + 1)
		}
		for n := range 200 {
			for _, off := range []int{0, 1} {
				x, y := a[off:off+n], b[off:off+n]
				copy(y, x)
				if !Equal(x, y) {
					t.Fatalf("vector %v: Equal(%q, itself) is false", on, x)
				}
				for at := range n {
					y[at] ^= 0x80
					if Equal(x, y) {
						t.Fatalf("vector %v: Equal(%q, %q) is true", on, x, y)
					}
					y[at] ^= 0x80
				}
			}
		}
		if !Equal(nil, nil) || bytes.Equal(a, b) && !Equal(a, b) {
			t.Fatal("Equal of empty slices is false")
		}
	}
}
