package responses

import (
	"bytes"
	"strconv"
	"testing"
)

// The counter counts as strconv formats, across every carry up to a
// million, and again from 0 after a reset; its two tails end a JSON
// object and an event.
func TestCounter(t *testing.T) {
	var c counter
	var want []byte
	for range 2 {
		c.reset()
		for n := 0; n <= 1_000_000; n++ {
			want = append(append(want[:0], seqStart...), strconv.Itoa(n)...)
			want = append(want, seqEnd...)
			if !bytes.Equal(c.tail(), want[len(textEnd):]) {
				t.Fatalf("counter at %d reads %q", n, c.tail())
			}
			if !bytes.Equal(c.textTail(), want) {
				t.Fatalf("counter at %d ends a text delta with %q", n, c.textTail())
			}
			c.next()
		}
	}
}
