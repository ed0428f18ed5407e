package proxy

import (
	"sync/atomic"
	"time"
)

// Channel statistics for the console: attempts since start, and attempts
// and failures in a ring of ten-second buckets covering the last five
// minutes. Recording is a few atomic adds, no lock. A bucket is reset
// without a lock when its slot comes round again, so a count that races
// the reset may be lost: the error rate is a health signal, not an account.
const (
	statsBucket  = 10 // seconds
	statsBuckets = 30
)

type channelStats struct {
	requests atomic.Int64
	ring     [statsBuckets]statsSlot
	last     atomic.Pointer[channelError] // nil until an attempt fails
}

// channelError is a channel's last failure, in words, and when it was.
type channelError struct {
	at    time.Time
	cause string
}

// noteError keeps cause as the channel's last error. Only failures call
// it, so the allocation is off the path of answered requests.
func (s *channelStats) noteError(now time.Time, cause string) {
	s.last.Store(&channelError{at: now, cause: cause})
}

type statsSlot struct {
	period   atomic.Int64 // unix time / statsBucket of the counts
	attempts atomic.Int64
	failures atomic.Int64
}

// slot returns the bucket of the period holding now, reset if it held an
// older period. (A newer one means a racing caller read the clock later:
// its bucket is as good.)
func (s *channelStats) slot(now time.Time) *statsSlot {
	p := now.Unix() / statsBucket
	b := &s.ring[p%statsBuckets]
	if old := b.period.Load(); old < p && b.period.CompareAndSwap(old, p) {
		b.attempts.Store(0)
		b.failures.Store(0)
	}
	return b
}

// attempt counts one upstream attempt and whether it failed.
func (s *channelStats) attempt(now time.Time, failed bool) {
	s.requests.Add(1)
	b := s.slot(now)
	b.attempts.Add(1)
	if failed {
		b.failures.Add(1)
	}
}

// failure counts a failure of an attempt already counted as answered: a
// response that could not be read, a stream that broke.
func (s *channelStats) failure(now time.Time) {
	s.slot(now).failures.Add(1)
}

// errorRate is the share of failed attempts over the buckets of the last
// five minutes, 0 when there were none.
func (s *channelStats) errorRate(now time.Time) float64 {
	p := now.Unix() / statsBucket
	var n, failed int64
	for i := range s.ring {
		b := &s.ring[i]
		if age := p - b.period.Load(); age >= 0 && age < statsBuckets {
			n += b.attempts.Load()
			failed += b.failures.Load()
		}
	}
	if n == 0 {
		return 0
	}
	return min(float64(failed)/float64(n), 1)
}
