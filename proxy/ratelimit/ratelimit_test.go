package ratelimit

import (
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newTestLimiter(r Remote) (*Limiter, *clock) {
	c := &clock{t: time.UnixMilli(1_000 * windowMillis)} // at a window start
	l := New(r)
	l.now = c.now
	return l, c
}

func TestRequestsPerMinute(t *testing.T) {
	l, c := newTestLimiter(nil)
	s := l.State("k")
	lim := Limits{RPM: 3}
	for i := range 3 {
		d := l.Admit(s, lim, 0)
		if !d.Allowed {
			t.Fatalf("request %d refused", i)
		}
		if want := int64(2 - i); d.RemainingRequests != want {
			t.Fatalf("request %d: remaining %d, want %d", i, d.RemainingRequests, want)
		}
	}
	d := l.Admit(s, lim, 0)
	if d.Allowed || d.ByTokens {
		t.Fatalf("4th request: %+v, want refused by requests", d)
	}
	// All three came at the start of this window: they decay over the next
	// window, and a fourth fits once a third of one has decayed.
	if d.RetryAfter < 60*time.Second || d.RetryAfter > 81*time.Second {
		t.Fatalf("retry after %v, want about 80s", d.RetryAfter)
	}
	c.advance(d.RetryAfter)
	if !l.Admit(s, lim, 0).Allowed {
		t.Fatalf("refused after waiting the advised %v", d.RetryAfter)
	}
}

func TestSlidingWindowWeighsPreviousWindow(t *testing.T) {
	l, c := newTestLimiter(nil)
	s := l.State("k")
	lim := Limits{RPM: 10}
	for range 10 {
		l.Admit(s, lim, 0)
	}
	c.advance(90 * time.Second) // half of the previous window still overlaps
	allowed := 0
	for range 10 {
		if l.Admit(s, lim, 0).Allowed {
			allowed++
		}
	}
	if allowed != 5 {
		t.Fatalf("allowed %d in the half-overlapping window, want 5", allowed)
	}
	c.advance(3 * time.Minute)
	if d := l.Admit(s, lim, 0); !d.Allowed || d.RemainingRequests != 9 {
		t.Fatalf("after idle minutes: %+v, want a fresh window", d)
	}
}

func TestTokensReservedAndSettled(t *testing.T) {
	l, _ := newTestLimiter(nil)
	s := l.State("k")
	lim := Limits{TPM: 1000}
	if d := l.Admit(s, lim, 600); !d.Allowed || d.RemainingTokens != 400 {
		t.Fatalf("first: %+v", d)
	}
	// The reservation is in flight: a second large request does not fit.
	if d := l.Admit(s, lim, 600); d.Allowed || !d.ByTokens || d.RetryAfter <= 0 {
		t.Fatalf("second while first in flight: %+v, want refused by tokens", d)
	}
	l.Settle(s, 600, 100) // the first used far less than estimated
	if d := l.Admit(s, lim, 600); !d.Allowed || d.RemainingTokens != 300 {
		t.Fatalf("after settling: %+v, want allowed with 300 left", d)
	}
	if d := l.Admit(s, lim, 5000); d.Allowed {
		t.Fatal("a request larger than the whole limit was admitted")
	}
}

// fixedRemote reports other nodes' requests in one window.
type fixedRemote struct{ window, req int64 }

func (r fixedRemote) Counts(_ string, w int64) (int64, int64) {
	if w == r.window {
		return r.req, 0
	}
	return 0, 0
}

func TestRemoteCountsJoinTheSum(t *testing.T) {
	l, _ := newTestLimiter(fixedRemote{window: 1000, req: 4})
	s := l.State("k")
	if d := l.Admit(s, Limits{RPM: 5}, 0); !d.Allowed {
		t.Fatalf("first: %+v", d)
	}
	if d := l.Admit(s, Limits{RPM: 5}, 0); d.Allowed {
		t.Fatal("admitted past the cluster-wide limit")
	}
	var got int64
	l.Each(1000, func(key string, req, _ int64) {
		if key == "k" {
			got = req
		}
	})
	if got != 1 {
		t.Fatalf("Each reports %d local requests, want 1 (remote ones are not ours)", got)
	}
}

func TestUnlimitedNeverRefuses(t *testing.T) {
	l, _ := newTestLimiter(nil)
	s := l.State("k")
	for range 10_000 {
		if !l.Admit(s, Limits{}, 1_000_000).Allowed {
			t.Fatal("refused without limits")
		}
	}
}
