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

// readyNow and allowNow read the clock for a circuit that is not closed:
// an open one waits out its cooldown, then lets one probe in.
func TestBreakerNow(t *testing.T) {
	var b breaker
	b.init(slog.New(slog.DiscardHandler), "ch", 1, 50*time.Millisecond)
	if b.readyNow() != 0 || b.allowNow() != 0 {
		t.Fatal("a closed circuit refused a request")
	}
	b.failure(time.Now())
	if wait := b.readyNow(); wait <= 0 || wait > 50*time.Millisecond {
		t.Fatalf("the open circuit is ready in %v, want within its cooldown", wait)
	}
	if b.allowNow() <= 0 {
		t.Fatal("the open circuit let a request in before its cooldown")
	}
	time.Sleep(60 * time.Millisecond)
	if b.readyNow() != 0 || b.allowNow() != 0 {
		t.Fatal("the cooled-down circuit refused its probe")
	}
	if b.readyNow() != time.Second {
		t.Error("a second request was let in beside the probe")
	}
}
