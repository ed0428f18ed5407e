package proxy

import (
	"math"
	"strconv"
	"testing"
)

// TestAppendDecimal: every length of number, with room in the buffer and
// without, and negatives, read as strconv writes them.
func TestAppendDecimal(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 12345, 200, 3000000, math.MaxInt64, -1, math.MinInt64}
	for p := int64(1); p < math.MaxInt64/10; p *= 10 {
		vs = append(vs, p-1, p, p+1, p*7+3)
	}
	for _, v := range vs {
		want := "x" + strconv.FormatInt(v, 10)
		for _, room := range []int{0, maxDecimal, 64} {
			b := append(make([]byte, 0, 1+room), 'x')
			if got := string(appendDecimal(b, v)); got != want {
				t.Errorf("appendDecimal(%d) with %d bytes of room = %q, want %q", v, room, got, want)
			}
		}
	}
}
