//go:build !race

package proxy

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestRealtimeRelayAllocs: a relayed message costs only what
// fasthttp/websocket allocates for it: the reader of each message it
// reads; the write buffer it gives back to wsWriteBuffers, boxed in an
// interface (24 B; the pool spares an idle session its two 16 KiB
// write buffers, about half its memory: the README's Realtime row);
// and toward the upstream, where the gateway is the client, its writer
// and the frame's mask key. The peers allocate nothing; starting each
// run's writer allocates a few times, hence the slack.
func TestRealtimeRelayAllocs(t *testing.T) {
	rs := openBenchSession(t)
	defer rs.close()
	const n, slack = 100, 5
	for _, m := range relayedMessages() {
		src, dst, frames := rs.ends(m)
		perMessage := 2.0
		if m.up {
			perMessage = 4
		}
		testutil.AllocsN(t, 10, m.name, n*perMessage+slack, func() {
			if err := relayMessages(src, dst, frames, n); err != nil {
				t.Fatal(err)
			}
		})
	}
}
