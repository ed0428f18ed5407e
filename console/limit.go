package console

import (
	"sync"
	"time"
)

// failures counts failed logins per key (a client IP or a user name) over
// a sliding window. A key with max failures inside the window is refused
// until the oldest of them leaves it. Only failures count, so someone who
// knows the password is never locked out by their own logins.
//
// It lives in one process: on several nodes an attacker gets max tries
// per node, which still bounds guessing to a handful a minute.
type failures struct {
	max    int
	window time.Duration

	mu        sync.Mutex
	seen      map[string][]time.Time // oldest first, at most max entries
	pruneSize int                    // prune when seen grows to this many keys
}

// minPruneSize is where pruning starts: below it, stale keys cost little.
const minPruneSize = 4096

func newFailures(max int, window time.Duration) *failures {
	return &failures{max: max, window: window, seen: map[string][]time.Time{}, pruneSize: minPruneSize}
}

// take records an attempt of key at now, counted as a failure until undo
// takes it back, unless key must wait: then it records nothing and reports
// the wait. Counting before the password is checked, not after, keeps
// logins sent in parallel from all passing the check before any of them
// failed.
func (f *failures) take(key string, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	recent := f.recent(key, now)
	if len(recent) >= f.max {
		return recent[0].Add(f.window).Sub(now)
	}
	if len(f.seen) >= f.pruneSize {
		f.prune(now)
	}
	f.seen[key] = append(recent, now)
	return 0
}

// undo takes back the attempt take recorded for key at at.
func (f *failures) undo(key string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.seen[key]
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Equal(at) {
			f.seen[key] = append(ts[:i], ts[i+1:]...)
			return
		}
	}
}

// forget clears key's failures (after it logged in).
func (f *failures) forget(key string) {
	f.mu.Lock()
	delete(f.seen, key)
	f.mu.Unlock()
}

// recent is key's failures still inside the window. Call with mu held.
func (f *failures) recent(key string, now time.Time) []time.Time {
	ts := f.seen[key]
	i := 0
	for i < len(ts) && !ts[i].After(now.Add(-f.window)) {
		i++
	}
	return ts[i:]
}

// prune drops keys whose failures have all left the window, which bounds
// memory under a spray of user names or IPs. The next prune waits until
// the map has doubled, so a spray of fresh keys costs amortized O(1) per
// failure, not a scan each. Call with mu held.
func (f *failures) prune(now time.Time) {
	for k := range f.seen {
		if len(f.recent(k, now)) == 0 {
			delete(f.seen, k)
		}
	}
	f.pruneSize = max(minPruneSize, 2*len(f.seen))
}

// knownClients remembers the client IPs each user name logged in from
// lately. The per-name failure limit does not apply to them: anyone can
// make five bad guesses a minute at "admin" from anywhere, and without
// this the admin could not log in at all while they do.
type knownClients struct {
	ttl time.Duration
	max int // entries; past it, expired ones go, then (under a spray) all

	mu   sync.Mutex
	seen map[string]time.Time // name key + "\x00" + IP → last login
}

func newKnownClients(ttl time.Duration, max int) *knownClients {
	return &knownClients{ttl: ttl, max: max, seen: map[string]time.Time{}}
}

func (k *knownClients) add(name, ip string, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.seen) >= k.max {
		for key, t := range k.seen {
			if now.Sub(t) > k.ttl {
				delete(k.seen, key)
			}
		}
		if len(k.seen) >= k.max {
			clear(k.seen)
		}
	}
	k.seen[name+"\x00"+ip] = now
}

func (k *knownClients) has(name, ip string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.seen[name+"\x00"+ip]
	return ok && now.Sub(t) <= k.ttl
}
