package ratelimit

import (
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newTestLimiter(f Fleet) (*Limiter, *clock) {
	c := &clock{t: time.UnixMilli(1_000 * minute)} // at a window start
	l := New(f, 0)
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

// fakeFleet is a fleet whose other nodes counted req requests and tok
// tokens in one window, and that hears from live of known nodes.
type fakeFleet struct {
	window, req, tok int64
	live, known      int
}

func (f *fakeFleet) Track(string) Shared { return f }
func (f *fakeFleet) Reach() (int, int)   { return f.live, f.known }
func (f *fakeFleet) Others(w int64) (int64, int64) {
	if w == f.window {
		return f.req, f.tok
	}
	return 0, 0
}

// The tokens other nodes counted join the sum as their requests do: a
// reservation that would pass the fleet's tpm is refused, by tokens.
func TestRemoteTokensJoinTheSum(t *testing.T) {
	l, _ := newTestLimiter(nil)
	l.fleet = &fakeFleet{window: l.Now(), tok: 900, live: 3, known: 3}
	s := l.State("k")
	lim := Limits{TPM: 1000}
	if d := l.Admit(s, lim, 60); !d.Allowed {
		t.Fatalf("60 tokens beside the fleet's 900 of 1000: %+v", d)
	}
	if d := l.Admit(s, lim, 60); d.Allowed || !d.ByTokens {
		t.Fatalf("60 more, past the fleet's 1000: %+v, want refused by tokens", d)
	}
}

func TestRemoteCountsJoinTheSum(t *testing.T) {
	l, _ := newTestLimiter(&fakeFleet{window: 1000, req: 4, live: 3, known: 3})
	s := l.State("k")
	if d := l.Admit(s, Limits{RPM: 5}, 0); !d.Allowed {
		t.Fatalf("first: %+v", d)
	}
	if d := l.Admit(s, Limits{RPM: 5}, 0); d.Allowed {
		t.Fatal("admitted past the cluster-wide limit")
	}
	var got, windows int64
	l.Each(1000, func(key string, _ Shared, w, req, _ int64) {
		if key == "k" && w == 1000 {
			got = req
		}
		windows++
	})
	if got != 1 || windows != 1 {
		t.Fatalf("Each reports %d local requests in %d windows, want 1 in 1 (remote ones are not ours)", got, windows)
	}
}

// A node that hears from 1 of the 4 nodes it knows admits a quarter of the
// limit; once the others are back, the whole of it (less what they counted).
func TestPartitionFallsBackToShare(t *testing.T) {
	f := &fakeFleet{live: 1, known: 4}
	l, c := newTestLimiter(f)
	s := l.State("k")
	lim := Limits{RPM: 100}
	if n := admitted(l, s, lim, 1000); n != 25 {
		t.Fatalf("admitted %d while partitioned, want 25 (100 / 4 nodes)", n)
	}
	c.advance(2 * time.Minute) // a fresh window, the partition healed
	f.live = 4
	f.window, f.req = l.Now(), 60
	if n := admitted(l, s, lim, 1000); n != 40 {
		t.Fatalf("admitted %d after the partition healed, want 40 (100 - 60 counted elsewhere)", n)
	}
}

func admitted(l *Limiter, s *State, lim Limits, tries int) (n int) {
	for range tries {
		if l.Admit(s, lim, 0).Allowed {
			n++
		}
	}
	return n
}

// With a 6 s window, 600 rpm admits 60 a window, and the window rolls
// every 6 s.
func TestShortWindowProratesTheLimit(t *testing.T) {
	l := New(nil, 6*time.Second)
	c := &clock{t: time.UnixMilli(1_000 * 6_000)}
	l.now = c.now
	s := l.State("k")
	lim := Limits{RPM: 600, TPM: 1}
	if n := admitted(l, s, Limits{RPM: 600}, 1000); n != 60 {
		t.Fatalf("admitted %d in a 6 s window, want 60", n)
	}
	c.advance(12 * time.Second)
	if d := l.Admit(s, lim, 1); !d.Allowed || d.Reset != 6*time.Second {
		t.Fatalf("two windows later: %+v, want allowed with 6s to the reset (a 1 tpm limit prorates to 1 token, not 0)", d)
	}
}

func TestCheckDoesNotCount(t *testing.T) {
	l, _ := newTestLimiter(nil)
	s := l.State("k")
	for range 5 {
		if !l.Check(s, Limits{RPM: 1}, 0).Allowed {
			t.Fatal("Check refused a request under the limit")
		}
	}
	if !l.Admit(s, Limits{RPM: 1}, 0).Allowed || l.Check(s, Limits{RPM: 1}, 0).Allowed {
		t.Fatal("Check counted, or did not see the admitted request")
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
