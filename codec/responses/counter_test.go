package responses

import (
	"strconv"
	"testing"
)

// The counter counts as strconv formats, across every carry up to a
// million, and again from 0 after a reset.
func TestCounter(t *testing.T) {
	var c counter
	for range 2 {
		c.reset()
		for n := 0; n <= 1_000_000; n++ {
			if got := string(c.digits()); got != strconv.Itoa(n) {
				t.Fatalf("counter at %d reads %q", n, got)
			}
			c.next()
		}
	}
}
