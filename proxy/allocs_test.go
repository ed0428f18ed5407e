//go:build !race

package proxy

import (
	"io"
	"testing"
)

func TestKeyLookupDoesNotAllocate(t *testing.T) {
	kr, secret := newTestKeyring(t)
	if n := testing.AllocsPerRun(1000, func() { kr.find(secret) }); n != 0 {
		t.Fatalf("key lookup allocates %v times", n)
	}
}

func TestRelayAllocatesNothingPerEvent(t *testing.T) {
	raw := streamFixture(t, 200)
	x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
	rd := &chunkedReader{}
	rl := newBenchRelay(rd, x)
	allocs := testing.AllocsPerRun(20, func() {
		rd.data, rd.size = raw, 512
		rl.reset(rd, x)
		rl.WriteTo(io.Discard) //nolint:errcheck
	})
	// Decoding the one usage object costs a few allocations per stream; the
	// 200 events themselves must cost none.
	if allocs > 4 {
		t.Fatalf("%v allocations for a 200-event stream", allocs)
	}
}
