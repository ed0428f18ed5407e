// Package ratelimit enforces requests-per-minute and tokens-per-minute limits
// per gateway key with a sliding-window counter: the count of the current
// one-minute window plus the previous window's count weighted by how much of
// it still overlaps the last sixty seconds. Admission costs one uncontended
// mutex and no allocation.
//
// Counts are grow-only per (key, window), so a cluster can gossip each
// node's counts and add the other nodes' through Remote; a node then admits on
// the cluster's sum. Tokens are reserved at admission from an estimate and
// settled with the real usage when the response ends; reservations are
// local (in flight on this node) and never gossiped.
package ratelimit

import (
	"sync"
	"time"
)

const windowMillis = 60_000

// Limits are the per-minute limits of one key; zero means unlimited.
type Limits struct {
	RPM int64
	TPM int64
}

// Remote reports what the other nodes of a cluster counted for a key in a
// window (a window is Unix milliseconds / 60000). It must be safe for
// concurrent use and must not block.
type Remote interface {
	Counts(key string, window int64) (requests, tokens int64)
}

// Limiter holds the counters of every key seen on this node.
type Limiter struct {
	now    func() time.Time
	remote Remote

	mu     sync.RWMutex
	states map[string]*State
}

// New returns a limiter; remote may be nil on a single node.
func New(remote Remote) *Limiter {
	return &Limiter{now: time.Now, remote: remote, states: map[string]*State{}}
}

// State is the counter set of one key. Callers keep the pointer (for example
// on their key object) so that admission needs no map lookup.
type State struct {
	key     string
	mu      sync.Mutex
	window  int64    // the window cur counts
	req     [2]int64 // previous and current window
	tok     [2]int64
	pending int64 // tokens reserved by requests in flight
}

// State returns the counters of key, creating them on first use.
func (l *Limiter) State(key string) *State {
	l.mu.RLock()
	s := l.states[key]
	l.mu.RUnlock()
	if s != nil {
		return s
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s = l.states[key]; s == nil {
		s = &State{key: key}
		l.states[key] = s
	}
	return s
}

// Decision is the outcome of an admission, with what the rate-limit headers
// report.
type Decision struct {
	Allowed bool
	// ByTokens is set when the tokens limit refused the request.
	ByTokens bool
	// RetryAfter is how long to wait before a retry can succeed.
	RetryAfter time.Duration

	RemainingRequests int64
	RemainingTokens   int64
	// Reset is when the current window ends.
	Reset time.Duration
}

// Admit counts one request against lim and reserves tokens for it. A refused
// request is not counted.
func (l *Limiter) Admit(s *State, lim Limits, reserve int64) Decision {
	nowMs := l.now().UnixMilli()
	w, elapsed := nowMs/windowMillis, nowMs%windowMillis
	var rReq, rTok, pReq, pTok int64
	if l.remote != nil {
		rReq, rTok = l.remote.Counts(s.key, w)
		pReq, pTok = l.remote.Counts(s.key, w-1)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.roll(w)
	prevReq, curReq := s.req[0]+pReq, s.req[1]+rReq
	prevTok, curTok := s.tok[0]+pTok, s.tok[1]+rTok
	usedReq := weighted(prevReq, curReq, elapsed)
	usedTok := weighted(prevTok, curTok, elapsed) + s.pending

	d := Decision{Reset: time.Duration(windowMillis-elapsed) * time.Millisecond}
	if lim.RPM > 0 && usedReq+1 > lim.RPM {
		d.RetryAfter = wait(prevReq, curReq, elapsed, lim.RPM, 1)
		return d
	}
	if lim.TPM > 0 && usedTok+reserve > lim.TPM {
		d.ByTokens = true
		d.RetryAfter = wait(prevTok, curTok+s.pending, elapsed, lim.TPM, reserve)
		return d
	}
	s.req[1]++
	s.pending += reserve
	d.Allowed = true
	d.RemainingRequests = max(lim.RPM-usedReq-1, 0)
	d.RemainingTokens = max(lim.TPM-usedTok-reserve, 0)
	return d
}

// Settle releases a reservation and charges the tokens really used.
func (l *Limiter) Settle(s *State, reserved, used int64) {
	w := l.now().UnixMilli() / windowMillis
	s.mu.Lock()
	s.roll(w)
	s.pending -= reserved
	s.tok[1] += used
	s.mu.Unlock()
}

// Each calls fn with this node's own counts of every key in window, for
// gossip to the other nodes.
func (l *Limiter) Each(window int64, fn func(key string, requests, tokens int64)) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for key, s := range l.states {
		s.mu.Lock()
		var req, tok int64
		switch window {
		case s.window:
			req, tok = s.req[1], s.tok[1]
		case s.window - 1:
			req, tok = s.req[0], s.tok[0]
		}
		s.mu.Unlock()
		if req != 0 || tok != 0 {
			fn(key, req, tok)
		}
	}
}

// roll moves the counters forward to window w.
func (s *State) roll(w int64) {
	switch {
	case w == s.window:
	case w == s.window+1:
		s.req = [2]int64{s.req[1], 0}
		s.tok = [2]int64{s.tok[1], 0}
	case w > s.window:
		s.req, s.tok = [2]int64{}, [2]int64{}
	default:
		return // the clock went back: keep counting in the newer window
	}
	s.window = w
}

// weighted is the sliding-window estimate of the last sixty seconds.
func weighted(prev, cur, elapsed int64) int64 {
	return cur + prev*(windowMillis-elapsed)/windowMillis
}

// wait is how long until weighted(prev, cur) + need fits under limit, given
// no further traffic.
func wait(prev, cur, elapsed, limit, need int64) time.Duration {
	room := limit - need
	if room < 0 {
		return windowMillis * time.Millisecond * 2 // never fits; ask for a full reset
	}
	var ms int64
	switch {
	case cur <= room && prev > 0:
		// The previous window's share decays within this window.
		ms = windowMillis - (room-cur)*windowMillis/prev - elapsed
	case cur <= room:
		ms = 0
	default:
		// Only in the next window, once this window's count has decayed enough.
		ms = windowMillis - elapsed + windowMillis - room*windowMillis/cur
	}
	return time.Duration(max(ms, 1)) * time.Millisecond
}
