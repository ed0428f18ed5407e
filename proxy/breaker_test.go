package proxy

import (
	"log/slog"
	"testing"
	"time"
)

// A half-open circuit's probe whose request ends without a verdict (its
// client went away) is given back: the next request probes, instead of
// the channel waiting forever for a verdict that never comes.
func TestBreakerAbandonedProbe(t *testing.T) {
	var b breaker
	b.init(slog.New(slog.DiscardHandler), "ch", 1, time.Millisecond)
	now := time.Now()
	b.failure(now)
	later := now.Add(time.Second)
	if wait := b.allow(later); wait != 0 {
		t.Fatalf("the cooled-down circuit refused its probe for %v", wait)
	}
	if b.ready(later) == 0 {
		t.Fatal("a second request was let in beside the probe")
	}
	b.abandon()
	if wait := b.ready(later); wait != 0 {
		t.Fatalf("after the probe was abandoned, the channel waits %v", wait)
	}
}
