package proxy

import (
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
)

// TestFailoverExhausted: the error of a request no candidate answered,
// the one rule of forward and the realtime dial. The last failure wins,
// as the upstream said it; when it is a 429 it carries the shortest wait
// of all the candidates that answered 429 (a 429 without a wait leaves the
// others'); with no candidate tried, a 429 for channels at their own
// limits, else a 503.
func TestFailoverExhausted(t *testing.T) {
	limited := func(wait time.Duration) *codec.Error {
		e := errorf(429, codec.KindRateLimitRequests, "", "busy")
		e.RateLimit.RetryAfter = wait
		return e
	}
	failed := func(status int) *codec.Error { return errorf(status, codec.KindUpstream, "", "failed") }
	for _, tc := range []struct {
		name      string
		served    bool
		limitWait time.Duration
		errs      []*codec.Error
		status    int
		wait      time.Duration
	}{
		{"all 429", true, 0, []*codec.Error{limited(7 * time.Second), limited(3 * time.Second), limited(5 * time.Second)}, 429, 3 * time.Second},
		{"429 without a wait last", true, 0, []*codec.Error{limited(4 * time.Second), limited(0)}, 429, 4 * time.Second},
		{"a failure, then 429", true, 0, []*codec.Error{failed(500), limited(3 * time.Second)}, 429, 3 * time.Second},
		{"429, then a failure", true, 0, []*codec.Error{limited(3 * time.Second), failed(503)}, 503, 0},
		{"upstream's 500 kept", true, 0, []*codec.Error{failed(502), failed(500)}, 500, 0},
		{"timeout last", true, 0, []*codec.Error{failed(500), failed(504)}, 504, 0},
		{"tried despite limits", true, 9 * time.Second, []*codec.Error{failed(502)}, 502, 0},
		{"none tried, some at their limits", true, 9 * time.Second, nil, 429, 9 * time.Second},
		{"none tried", true, 0, nil, 503, 0},
		{"none serves", false, 0, nil, 503, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &exchange{op: opRealtime, model: "m"}
			f := failover{served: tc.served, limitWait: tc.limitWait}
			for _, e := range tc.errs {
				f.failed(e)
			}
			e := f.exhausted(x)
			if e.Status != tc.status || e.RateLimit.RetryAfter != tc.wait {
				t.Errorf("%d waiting %v, want %d waiting %v (%s)", e.Status, e.RateLimit.RetryAfter, tc.status, tc.wait, e.Message)
			}
		})
	}
}
