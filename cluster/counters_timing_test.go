package cluster

import (
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
)

// newBenchNode is a node that counts, not started: admission reads its
// sums as it would in a fleet, here with another node's counts in them.
func newBenchNode(tb testing.TB) (*Node, *ratelimit.Limiter, *ratelimit.State) {
	n := New(Options{Name: "bench", Window: time.Minute})
	lim := ratelimit.New(n, time.Minute)
	s := lim.State("key")
	w := lim.Now()
	mergeCount(tb, n.counts, 2, "other", w, limitID("key"), 1000, 1_000_000)
	return n, lim, s
}

// BenchmarkAdmitWithFleet: an admission and its settlement on a limit that
// other nodes count too (DESIGN.md §5: ≤ 200 ns, 0 allocations).
func BenchmarkAdmitWithFleet(b *testing.B) {
	_, l, s := newBenchNode(b)
	lim := ratelimit.Limits{RPM: 1 << 40, TPM: 1 << 50}
	b.ReportAllocs()
	for b.Loop() {
		if d := l.Admit(s, lim, 100); d.Allowed {
			l.Settle(s, 100, 90)
		}
	}
}

func BenchmarkAdmitWithFleetParallel(b *testing.B) {
	_, l, s := newBenchNode(b)
	lim := ratelimit.Limits{RPM: 1 << 40, TPM: 1 << 50}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Admit(s, lim, 0)
		}
	})
}

// BenchmarkMergeMessage: a full UDP message of another node's counts (40
// limits), read and merged.
func BenchmarkMergeMessage(b *testing.B) {
	n, l, _ := newBenchNode(b)
	w := l.Now()
	var msg []byte
	p := &packer{windowMs: 60_000, src: 3, node: "other", limit: maxPacket,
		out: func(m []byte) { msg = append(msg[:0], m...) }}
	entries := 0
	for id := range uint64(1000) {
		if msg != nil {
			break
		}
		p.add(w, id, 5000, 500_000)
		entries++
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	b.ReportMetric(float64(entries-1), "counts/msg")
	for b.Loop() {
		n.report(n.counts.apply(msg))
	}
}

// BenchmarkAdmitOnlyWithFleet: the admission alone, reading the clock.
func BenchmarkAdmitOnlyWithFleet(b *testing.B) {
	_, l, s := newBenchNode(b)
	lim := ratelimit.Limits{RPM: 1 << 40, TPM: 1 << 50}
	b.ReportAllocs()
	for b.Loop() {
		l.Admit(s, lim, 0)
	}
}

// BenchmarkAdmitAtWithFleet: the admission as the request path pays it,
// at the request's start time (DESIGN.md §5: ≤ 200 ns, 0 allocations).
func BenchmarkAdmitAtWithFleet(b *testing.B) {
	_, l, s := newBenchNode(b)
	lim := ratelimit.Limits{RPM: 1 << 40, TPM: 1 << 50}
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		l.AdmitAt(s, lim, 0, start)
	}
}
