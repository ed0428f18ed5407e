package responses

import (
	"strconv"
	"testing"
)

// The counter counts as strconv formats, across every carry up to a
// million, and again from 0 after a reset; its two tails end a JSON
// object and an event.
func TestCounter(t *testing.T) {
	var c counter
	for range 2 {
		c.reset()
		for n := 0; n <= 1_000_000; n++ {
			want := `"sequence_number":` + strconv.Itoa(n) + "}\n\n"
			if got := string(c.tail()); got != want {
				t.Fatalf("counter at %d reads %q", n, got)
			}
			if got := string(c.textTail()); got != `","logprobs":[],`+want {
				t.Fatalf("counter at %d ends a text delta with %q", n, got)
			}
			c.next()
		}
	}
}
