// Package ratelimit enforces requests-per-minute and tokens-per-minute limits
// (a key's, a key's on one model, a channel's) with a sliding-window
// counter: the count of the current window plus the previous window's count
// weighted by how much of it still overlaps the last window's length. The
// window is a minute unless New is given another length; the per-minute
// limits are then prorated to it. Admission costs one uncontended mutex and
// no allocation.
//
// Counts are grow-only per (limit, window), so a cluster can gossip each
// node's counts and add the other nodes' through a Fleet; a node then
// admits on the fleet's sum. When the fleet reports nodes it cannot hear
// from (a partition, a crash not yet forgotten), a node admits only its
// share of each limit: limit × nodes heard from ÷ nodes known. Tokens are
// reserved at admission from an estimate and settled with the real usage
// when the response ends; reservations are local (in flight on this node)
// and never gossiped.
package ratelimit

import (
	"sync"
	"time"
)

// minute is the period of the configured limits, in milliseconds.
const minute = 60_000

// Limits are the per-minute limits of one key; zero means unlimited.
type Limits struct {
	RPM int64
	TPM int64
}

// Fleet is what a cluster tells the limiter. Its methods must be safe for
// concurrent use and must not block: they run on every admission.
type Fleet interface {
	// Track returns the other nodes' counts of the limit named key. The
	// limiter calls it once per limit and keeps the result.
	Track(key string) Shared
	// Reach reports how many nodes this one hears from (itself included)
	// and how many it knows of; live < known scales every limit down to
	// this group's share.
	Reach() (live, known int)
}

// Shared is the other nodes' counts of one limit.
type Shared interface {
	// Others reports what the other nodes counted in window w (Unix
	// milliseconds / the window's length).
	Others(w int64) (requests, tokens int64)
}

// Limiter holds the counters of every limit seen on this node.
type Limiter struct {
	now      func() time.Time
	fleet    Fleet
	windowMs int64

	mu     sync.RWMutex
	states map[string]*State
}

// New returns a limiter whose windows last window (a minute when 0); fleet
// may be nil on a single node.
func New(fleet Fleet, window time.Duration) *Limiter {
	ms := window.Milliseconds()
	if ms <= 0 {
		ms = minute
	}
	return &Limiter{now: time.Now, fleet: fleet, windowMs: ms, states: map[string]*State{}}
}

// Window is the length of the limiter's windows.
func (l *Limiter) Window() time.Duration { return time.Duration(l.windowMs) * time.Millisecond }

// State is the counter set of one limit. Callers keep the pointer (for
// example on their key object) so that admission needs no map lookup.
type State struct {
	key     string
	shared  Shared // nil on a single node
	mu      sync.Mutex
	window  int64    // the window cur counts
	req     [2]int64 // previous and current window
	tok     [2]int64
	pending int64 // tokens reserved by requests in flight
}

// State returns the counters of the limit named key, creating them on
// first use.
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
		if l.fleet != nil {
			s.shared = l.fleet.Track(key)
		}
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
	return l.decide(s, lim, reserve, true, l.now())
}

// AdmitAt is Admit at the time now, for a caller that has read the clock
// already (a request's start): reading it is half the cost of an
// admission.
func (l *Limiter) AdmitAt(s *State, lim Limits, reserve int64, now time.Time) Decision {
	return l.decide(s, lim, reserve, true, now)
}

// Check is Admit without counting: whether the request would be admitted
// now. A caller with several limits to pass checks the others first.
func (l *Limiter) Check(s *State, lim Limits, reserve int64) Decision {
	return l.decide(s, lim, reserve, false, l.now())
}

// CheckAt is Check at the time now.
func (l *Limiter) CheckAt(s *State, lim Limits, reserve int64, now time.Time) Decision {
	return l.decide(s, lim, reserve, false, now)
}

func (l *Limiter) decide(s *State, lim Limits, reserve int64, count bool, now time.Time) Decision {
	nowMs := now.UnixMilli()
	w, elapsed := nowMs/l.windowMs, nowMs%l.windowMs
	live, known := 1, 1
	if l.fleet != nil {
		live, known = l.fleet.Reach()
	}
	rpm, tpm := l.perWindow(lim.RPM, live, known), l.perWindow(lim.TPM, live, known)
	var rReq, rTok, pReq, pTok int64
	if s.shared != nil {
		rReq, rTok = s.shared.Others(w)
		pReq, pTok = s.shared.Others(w - 1)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.roll(w)
	prevReq, curReq := s.req[0]+pReq, s.req[1]+rReq
	prevTok, curTok := s.tok[0]+pTok, s.tok[1]+rTok
	usedReq := l.weighted(prevReq, curReq, elapsed)
	usedTok := l.weighted(prevTok, curTok, elapsed) + s.pending

	d := Decision{Reset: time.Duration(l.windowMs-elapsed) * time.Millisecond}
	if rpm > 0 && usedReq+1 > rpm {
		d.RetryAfter = l.wait(prevReq, curReq, elapsed, rpm, 1)
		return d
	}
	if tpm > 0 && usedTok+reserve > tpm {
		d.ByTokens = true
		d.RetryAfter = l.wait(prevTok, curTok+s.pending, elapsed, tpm, reserve)
		return d
	}
	if count {
		s.req[1]++
		s.pending += reserve
	}
	d.Allowed = true
	d.RemainingRequests = max(rpm-usedReq-1, 0)
	d.RemainingTokens = max(tpm-usedTok-reserve, 0)
	return d
}

// perWindow is a per-minute limit prorated to the window (rounded up, so
// that a small limit never becomes zero, unlimited) and, when some nodes
// are out of reach, scaled to the share of the nodes heard from.
func (l *Limiter) perWindow(limit int64, live, known int) int64 {
	if limit <= 0 {
		return 0
	}
	if l.windowMs != minute {
		limit = (limit*l.windowMs + minute - 1) / minute
	}
	if live < known && known > 0 {
		limit = max(limit*int64(live)/int64(known), 1)
	}
	return limit
}

// Settle releases a reservation and charges the tokens really used.
func (l *Limiter) Settle(s *State, reserved, used int64) { l.SettleAt(s, reserved, used, l.now()) }

// SettleAt is Settle at the time now.
func (l *Limiter) SettleAt(s *State, reserved, used int64, now time.Time) {
	w := now.UnixMilli() / l.windowMs
	s.mu.Lock()
	s.roll(w)
	s.pending -= reserved
	s.tok[1] += used
	s.mu.Unlock()
}

// Each calls fn with this node's own counts of every limit in windows w-1
// and w that are not zero, for gossip to the other nodes; shared is what
// the fleet's Track returned for the limit (nil without a fleet).
func (l *Limiter) Each(w int64, fn func(key string, shared Shared, window, requests, tokens int64)) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for key, s := range l.states {
		s.mu.Lock()
		var req, tok [2]int64
		for i, win := range [2]int64{w - 1, w} {
			switch win {
			case s.window:
				req[i], tok[i] = s.req[1], s.tok[1]
			case s.window - 1:
				req[i], tok[i] = s.req[0], s.tok[0]
			}
		}
		s.mu.Unlock()
		for i := range 2 {
			if req[i] != 0 || tok[i] != 0 {
				fn(key, s.shared, w-1+int64(i), req[i], tok[i])
			}
		}
	}
}

// Now is the current window (Unix milliseconds / the window's length).
func (l *Limiter) Now() int64 { return l.now().UnixMilli() / l.windowMs }

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

// weighted is the sliding-window estimate of the last window's length.
func (l *Limiter) weighted(prev, cur, elapsed int64) int64 {
	return cur + prev*(l.windowMs-elapsed)/l.windowMs
}

// wait is how long until weighted(prev, cur) + need fits under limit, given
// no further traffic.
func (l *Limiter) wait(prev, cur, elapsed, limit, need int64) time.Duration {
	win := l.windowMs
	room := limit - need
	if room < 0 {
		return time.Duration(win) * time.Millisecond * 2 // never fits; ask for a full reset
	}
	var ms int64
	switch {
	case cur <= room && prev > 0:
		// The previous window's share decays within this window.
		ms = win - (room-cur)*win/prev - elapsed
	case cur <= room:
		ms = 0
	default:
		// Only in the next window, once this window's count has decayed enough.
		ms = win - elapsed + win - room*win/cur
	}
	return time.Duration(max(ms, 1)) * time.Millisecond
}
