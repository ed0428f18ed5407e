package proxy

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/config"
)

// BenchmarkRouteOrder orders the candidates of a route of one channel (the
// commonest) and of two of one priority (a weighted draw).
func BenchmarkRouteOrder(b *testing.B) {
	for _, n := range []int{1, 2} {
		r := &route{}
		for range n {
			r.channels = append(r.channels, &channel{cfg: config.Channel{}})
			r.upstream, r.weights = append(r.upstream, "m"), append(r.weights, 1)
		}
		b.Run(map[int]string{1: "one", 2: "two"}[n], func(b *testing.B) {
			var dst [maxCandidates]candidate
			b.ReportAllocs()
			for b.Loop() {
				if out, _ := r.order(dst[:0]); len(out) != n {
					b.Fatalf("%d candidates, want %d", len(out), n)
				}
			}
		})
	}
}
