//go:build !race

package proxy

import (
	"io"
	"testing"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestKeyLookupDoesNotAllocate(t *testing.T) {
	kr, secret := newTestKeyring(t)
	testutil.Allocs(t, "key lookup", 0, func() { kr.find(secret) })
}

func TestRelayAllocatesNothingPerEvent(t *testing.T) {
	raw := streamFixture(t, 200)
	x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
	rd := &chunkedReader{}
	rl := newBenchRelay(rd, x)
	// Decoding the one usage object costs a few allocations per stream; the
	// 200 events themselves must cost none.
	testutil.AllocsN(t, 20, "a 200-event stream", 4, func() {
		rd.data, rd.size = raw, 512
		rl.reset(rd, x)
		rl.WriteTo(io.Discard) //nolint:errcheck
	})
}
