package cluster

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
)

// The counters of the other nodes. Each source (one run of a node: a
// restarted node is a new source) counts its own admissions per (limit,
// window) in grow-only counters, and gossips their values; a value heard
// is merged by max into the source's entry, so that messages may arrive
// twice, late or out of order. Whatever an entry grows by is added to the
// limit's sum for that window, which admission reads with atomic loads and
// no lock: the sum over every source but this one. A source's counts stay
// in the sums until their window is over, whether the node is alive, left
// or dead: they were admitted.

// counter is one limit as seen from the other nodes: the sums admission
// reads (ratelimit.Shared), and what this node last sent of its own counts.
type counter struct {
	id    uint64
	slots [2]slot // by window parity: the current window and the one before
	// tracked: this node's limiter holds the counter; it is never swept.
	tracked atomic.Bool
	// sent is this node's own count as last gossiped, by window parity;
	// used by the flush goroutine only.
	sent [2]sentEntry
}

// sentEntry is a count as last sent, and the flush at which to send it
// again if it does not change (0: not again).
type sentEntry struct {
	entry
	again int
}

// slot is the other nodes' sum for one window. Writers hold counters.mu;
// readers check window before and after reading the counts.
type slot struct {
	window, req, tok atomic.Int64
}

var _ ratelimit.Shared = (*counter)(nil)

// Others reports the other nodes' counts of the limit in window w.
func (c *counter) Others(w int64) (requests, tokens int64) {
	s := &c.slots[w&1]
	if s.window.Load() != w {
		return 0, 0
	}
	requests, tokens = s.req.Load(), s.tok.Load()
	if s.window.Load() != w { // rolled to another window meanwhile
		return 0, 0
	}
	return requests, tokens
}

// add grows the sum of window w. Called under counters.mu.
func (c *counter) add(w, req, tok int64) {
	s := &c.slots[w&1]
	switch cur := s.window.Load(); {
	case cur > w:
		return // the slot holds a newer window already
	case cur < w:
		s.window.Store(-1) // readers see no window while the counts reset
		s.req.Store(0)
		s.tok.Store(0)
		s.window.Store(w)
	}
	s.req.Add(req)
	s.tok.Add(tok)
}

// entry is a source's count of one limit in one window.
type entry struct{ window, req, tok int64 }

// source is one run of another node: what it counted, by limit id and
// window parity.
type source struct {
	node   string
	heard  time.Time // when a count of it last arrived
	counts map[uint64]*[2]entry
}

// counters holds every other source's counts and the sums per limit.
type counters struct {
	self     uint64 // this node's source id, whose counts are the limiter's
	windowMs int64
	now      func() time.Time

	mu      sync.Mutex
	limits  map[uint64]*counter
	sources map[uint64]*source
}

func newCounters(self uint64, window time.Duration, now func() time.Time) *counters {
	return &counters{self: self, windowMs: window.Milliseconds(), now: now,
		limits: map[uint64]*counter{}, sources: map[uint64]*source{}}
}

// window is the current window number.
func (cs *counters) window() int64 { return cs.now().UnixMilli() / cs.windowMs }

// track returns the counter of the limit id, for this node's limiter.
func (cs *counters) track(id uint64) *counter {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.limit(id)
	c.tracked.Store(true)
	return c
}

// limit returns the counter of id, creating it. Called under mu.
func (cs *counters) limit(id uint64) *counter {
	c := cs.limits[id]
	if c == nil {
		c = &counter{id: id}
		c.slots[0].window.Store(-1)
		c.slots[1].window.Store(-1)
		c.sent[0].window, c.sent[1].window = -1, -1 // nothing sent yet
		cs.limits[id] = c
	}
	return c
}

// apply merges a counts message under one lock, for one reading of the
// clock: messages hold the counts of one source and window. Counts are
// values, not increments. This node's own counts, and counts of windows
// other than the current one, the one before and the one after (clocks
// differ a little), are ignored.
func (cs *counters) apply(msg []byte) error {
	now, heard := cs.window(), cs.now()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var s *source
	return decodeCounts(msg, cs.windowMs, func(src uint64, node []byte, w int64, id uint64, req, tok int64) {
		if src == cs.self || w < now-1 || w > now+1 {
			return
		}
		if s == nil {
			s = cs.source(src, node)
			s.heard = heard
		}
		cs.mergeLocked(s, w, id, req, tok)
	})
}

// source returns the source src, a run of node, creating it. Called under mu.
func (cs *counters) source(src uint64, node []byte) *source {
	s := cs.sources[src]
	if s == nil {
		s = &source{node: string(node), counts: map[uint64]*[2]entry{}}
		cs.sources[src] = s
	}
	return s
}

// mergeLocked merges one count of source s by max. Called under mu.
func (cs *counters) mergeLocked(s *source, w int64, id uint64, req, tok int64) {
	es := s.counts[id]
	if es == nil {
		es = &[2]entry{{window: -1}, {window: -1}}
		s.counts[id] = es
	}
	e := &es[w&1]
	switch {
	case e.window > w:
		return
	case e.window < w:
		*e = entry{window: w}
	}
	dReq, dTok := max(req-e.req, 0), max(tok-e.tok, 0)
	if dReq == 0 && dTok == 0 {
		return
	}
	e.req += dReq
	e.tok += dTok
	cs.limit(id).add(w, dReq, dTok)
}

// sweep forgets the counts of windows over, the sources with none left,
// and the limits no one here tracks that have no count left.
func (cs *counters) sweep() {
	old := cs.window() - 1
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for src, s := range cs.sources {
		for id, es := range s.counts {
			if es[0].window < old && es[1].window < old {
				delete(s.counts, id)
			}
		}
		if len(s.counts) == 0 {
			delete(cs.sources, src)
		}
	}
	for id, c := range cs.limits {
		if !c.tracked.Load() && c.slots[0].window.Load() < old && c.slots[1].window.Load() < old {
			delete(cs.limits, id)
		}
	}
}

// eachSource calls fn with every other source's counts in windows w-1 and
// w, for the state a joining node receives.
func (cs *counters) eachSource(w int64, fn func(src uint64, node string, window int64, id uint64, req, tok int64)) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for src, s := range cs.sources {
		for id, es := range s.counts {
			for _, e := range es {
				if e.window >= w-1 && e.window <= w && (e.req != 0 || e.tok != 0) {
					fn(src, s.node, e.window, id, e.req, e.tok)
				}
			}
		}
	}
}

// heard reports, by node name, when a count of it last arrived.
func (cs *counters) heard() map[string]time.Time {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := make(map[string]time.Time, len(cs.sources))
	for _, s := range cs.sources {
		if s.heard.After(out[s.node]) {
			out[s.node] = s.heard
		}
	}
	return out
}

// limitID names a limit on the wire: the FNV-1a hash of its key, so that
// every node computes the same id and names never travel.
func limitID(key string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return h
}
