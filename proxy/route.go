package proxy

import (
	"github.com/prometheus/client_golang/prometheus"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// route is the set of channels that serve one public model name, sorted by
// priority (lower first).
type route struct {
	public   string                // the public model name
	escaped  string                // the public name as it stands between JSON quotes
	tokens   [4]prometheus.Counter // input, output, cached input, reasoning
	channels []*channel
	upstream []string // upstream model name on each channel
	weights  []int
}

// maxCandidates bounds the candidates of one request so that ordering them
// needs no allocation; a route with more channels tries its first ones.
const maxCandidates = 16

// candidate is one channel to try, with the model name it knows.
type candidate struct {
	ch    *channel
	model string
}

// order appends the candidates of r to dst in the order to try them: by
// priority, and within a priority in a weighted random order. Channels whose
// circuit is open are left out; reopen reports when the first of them may be
// probed again.
func (r *route) order(dst []candidate, now time.Time) (out []candidate, reopen time.Duration) {
	for start := 0; start < len(r.channels) && len(dst) < maxCandidates; {
		end := start + 1
		prio := r.channels[start].cfg.Priority
		for end < len(r.channels) && r.channels[end].cfg.Priority == prio {
			end++
		}
		var tier [maxCandidates]int
		n, total := 0, 0
		for i := start; i < end && n < maxCandidates; i++ {
			if wait := r.channels[i].breaker.ready(now); wait > 0 {
				if reopen == 0 || wait < reopen {
					reopen = wait
				}
				continue
			}
			tier[n] = i
			total += r.weights[i]
			n++
		}
		// Weighted sampling without replacement.
		for ; n > 0 && len(dst) < maxCandidates; n-- {
			pick := rand.IntN(total)
			j := 0
			for pick >= r.weights[tier[j]] {
				pick -= r.weights[tier[j]]
				j++
			}
			i := tier[j]
			dst = append(dst, candidate{r.channels[i], r.upstream[i]})
			total -= r.weights[i]
			tier[j] = tier[n-1]
		}
		start = end
	}
	return dst, reopen
}

// sortRoute orders a route's channels by priority, keeping configuration order within one.
func sortRoute(r *route) {
	idx := make([]int, len(r.channels))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return r.channels[a].cfg.Priority - r.channels[b].cfg.Priority })
	chs, ups, ws := make([]*channel, len(idx)), make([]string, len(idx)), make([]int, len(idx))
	for k, i := range idx {
		chs[k], ups[k], ws[k] = r.channels[i], r.upstream[i], r.weights[i]
	}
	r.channels, r.upstream, r.weights = chs, ups, ws
}

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

// ready is allow without taking the probe: 0 when a request could use the
// channel now, else how long until it may be probed.
func (b *breaker) ready(now time.Time) time.Duration {
	if b.state.Load() == closed {
		return 0
	}
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
	if b.state.Load() == closed {
		return 0
	}
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

// String names the breaker's state.
func (b *breaker) String() string { return stateNames[b.state.Load()] }
