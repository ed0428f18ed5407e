package proxy

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestAppendDecimal: every length of number, after a key or none, with
// room in the buffer and without, and negatives, read as strconv writes
// them.
func TestAppendDecimal(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 12345, 200, 3000000, math.MaxInt64, math.MaxInt64 - 1, -1, math.MinInt64}
	// Every power of ten an int64 holds, 1 to 1e18, and its neighbours:
	// the lengths 1 to 19 and each step from one to the next.
	for p := uint64(1); p <= 1e18; p *= 10 {
		vs = append(vs, int64(p-1), int64(p), int64(p+1), int64(p*7+3))
	}
	for _, v := range vs {
		for _, key := range []string{"", `,"status":`} {
			want := "x" + key + strconv.FormatInt(v, 10)
			for _, room := range []int{0, maxDecimal, len(key) + maxDecimal - 1, len(key) + maxDecimal, 64} {
				b := append(make([]byte, 0, 1+room), 'x')
				if got := string(appendDecimal(b, key, v)); got != want {
					t.Errorf("appendDecimal(%q, %d) with %d bytes of room = %q, want %q", key, v, room, got, want)
				}
			}
		}
	}
}

// TestPutDecimal: putDecimal writes every length of uint64, up to the
// largest, at the very end of its buffer, touching nothing before it.
func TestPutDecimal(t *testing.T) {
	us := []uint64{0, 1e19 - 1, 1e19, math.MaxUint64}
	for p := uint64(1); p <= 1e18; p *= 10 {
		us = append(us, p-1, p, p+1, p*7+3)
	}
	for _, u := range us {
		var buf [24]byte
		for i := range buf {
			buf[i] = 'x'
		}
		want := strings.Repeat("x", len(buf)-decimalLen(u)) + strconv.FormatUint(u, 10)
		if i := putDecimal(buf[:], u); string(buf[:]) != want || i != len(buf)-decimalLen(u) {
			t.Errorf("putDecimal(%d) = %q from %d, want %q", u, buf[:], i, want)
		}
	}
}
