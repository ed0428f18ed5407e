package proxy

import (
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/codec"
)

// An exchange's reservations are settled on each limit it was counted
// under with the tokens it used; a stream the client abandoned before the
// upstream reported usage is charged the estimate, one refused before any
// upstream saw it is charged nothing.
func TestSettleChargesAbandonedStreams(t *testing.T) {
	f := func(name string, x *exchange, want int64) {
		t.Helper()
		g := &Gateway{limiter: ratelimit.New(nil, 0)}
		lim := ratelimit.Limits{TPM: 1000}
		states := [3]*ratelimit.State{g.limiter.State("k"), g.limiter.State("m"), g.limiter.State("c")}
		for _, st := range states {
			g.limiter.Admit(st, lim, x.reserve)
		}
		x.limit, x.modelLimit, x.channelLimit = states[0], states[1], states[2]
		g.settleLimits(x, time.Now())
		for i, st := range states {
			if left := g.limiter.Check(st, lim, 0).RemainingTokens; left != 1000-want {
				t.Errorf("%s, limit %d: %d tokens left, want %d", name, i, left, 1000-want)
			}
		}
	}
	f("answered", &exchange{reserve: 300, status: 200, attempts: 1, usage: codec.Usage{Input: 20, Output: 30}}, 50)
	f("abandoned before usage", &exchange{reserve: 300, status: 499, attempts: 1}, 300)
	f("abandoned after usage", &exchange{reserve: 300, status: 499, attempts: 1, usage: codec.Usage{Input: 40}}, 40)
	f("gone before any upstream", &exchange{reserve: 300, status: 499}, 0)
}
