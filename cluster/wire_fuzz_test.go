package cluster

import (
	"testing"
	"time"
)

// FuzzApply feeds any bytes to what a node does with another's message: a
// counts message or a state is read or refused with an error, never a
// panic, and what it merges never makes a sum negative or lower.
func FuzzApply(f *testing.F) {
	var msgs [][]byte
	p := &packer{windowMs: 60_000, src: 9, node: "n", limit: maxPacket,
		out: func(b []byte) { msgs = append(msgs, append([]byte(nil), b...)) }}
	p.add(1000, 1, 5, 500)
	p.add(999, 2, 1<<40, 0)
	p.add(1000, 1, 1<<62, 1<<63-1) // the sum must not overflow
	p.end()
	for _, m := range msgs {
		f.Add(m)
		f.Add(append(append([]byte{msgState}, byte(len(m))), m...))
	}
	f.Add([]byte{msgCounts})
	f.Add([]byte{msgState, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		cs := newCounters(1, time.Minute, fixedClock)
		c := cs.track(1)
		mergeCount(t, cs, 2, "b", 1000, 1, 10, 10)
		if len(b) > 0 && b[0] == msgState {
			decodeState(b, cs.apply) //nolint:errcheck // any outcome but a panic
		} else {
			cs.apply(b) //nolint:errcheck
		}
		for _, w := range []int64{999, 1000} {
			if req, tok := c.Others(w); req < 0 || tok < 0 || (w == 1000 && (req < 10 || tok < 10)) {
				t.Fatalf("window %d: %d requests, %d tokens after %x", w, req, tok, b)
			}
		}
	})
}
