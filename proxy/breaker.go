package proxy

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Breaker states.
const (
	closed int32 = iota
	open
	halfOpen
)

var stateNames = [...]string{closed: "closed", open: "open", halfOpen: "half-open"}

// breaker is a channel's circuit breaker: after `threshold` failures in a row
// the channel is left out for `cooldown`; then one request is let through as
// a probe, whose outcome closes the circuit or opens it again.
type breaker struct {
	log       *slog.Logger
	name      string
	threshold int32
	cooldown  time.Duration

	state    atomic.Int32 // read without the lock on the hot path
	failures atomic.Int32

	mu       sync.Mutex
	openedAt time.Time
	probing  bool
}

func (b *breaker) init(log *slog.Logger, name string, threshold int, cooldown time.Duration) {
	b.log, b.name, b.threshold, b.cooldown = log, name, int32(threshold), cooldown
}

// readyNow and allowNow are ready and allow now: a closed circuit, which
// nearly every one is, answers without the clock or the lock.
func (b *breaker) readyNow() time.Duration {
	if b.state.Load() == closed {
		return 0
	}
	return b.ready(time.Now())
}

func (b *breaker) allowNow() time.Duration {
	if b.state.Load() == closed {
		return 0
	}
	return b.allow(time.Now())
}

// ready is allow without taking the probe: 0 when a request could use the
// channel now, else how long until it may be probed.
func (b *breaker) ready(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.state.Load() == open:
		return max(b.openedAt.Add(b.cooldown).Sub(now), 0)
	case b.probing:
		return time.Second
	}
	return 0
}

// allow reports 0 when a request may use the channel now, taking the probe
// slot of a half-open circuit, else how long until it may be probed.
func (b *breaker) allow(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state.Load() {
	case open:
		if wait := b.openedAt.Add(b.cooldown).Sub(now); wait > 0 {
			return wait
		}
		b.setState(halfOpen)
		b.probing = true
		return 0
	case halfOpen:
		if b.probing {
			return time.Second // one probe at a time; others wait for its verdict
		}
		b.probing = true
	}
	return 0
}

// success records an answer from the upstream (any status it is not to blame for).
func (b *breaker) success() {
	b.failures.Store(0)
	if b.state.Load() == closed {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.setState(closed)
	b.mu.Unlock()
}

// abandon gives back the probe of a half-open circuit whose request ended
// without a verdict (its client went away): the next request probes.
func (b *breaker) abandon() {
	if b.state.Load() != halfOpen {
		return
	}
	b.mu.Lock()
	if b.state.Load() == halfOpen {
		b.probing = false
	}
	b.mu.Unlock()
}

// failure records a failure the upstream is to blame for.
func (b *breaker) failure(now time.Time) {
	n := b.failures.Add(1)
	if b.state.Load() == closed && n < b.threshold {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.state.Load(); st == halfOpen || (st == closed && b.failures.Load() >= b.threshold) {
		b.probing = false
		b.openedAt = now
		b.setState(open)
	}
}

func (b *breaker) setState(s int32) {
	if old := b.state.Swap(s); old != s {
		b.log.Warn("channel circuit "+stateNames[s], "channel", b.name, "from", stateNames[old],
			"failures", b.failures.Load(), "cooldown", b.cooldown)
	}
}

// openness is the state as a number for metrics: 0 closed, 0.5 half-open, 1 open.
func (b *breaker) openness() float64 {
	switch b.state.Load() {
	case open:
		return 1
	case halfOpen:
		return 0.5
	}
	return 0
}

// openUntil is when an open circuit lets a probe through; zero when it is
// not open.
func (b *breaker) openUntil() time.Time {
	if b.state.Load() != open {
		return time.Time{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.openedAt.Add(b.cooldown)
}

// String names the breaker's state.
func (b *breaker) String() string { return stateNames[b.state.Load()] }
