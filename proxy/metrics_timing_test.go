package proxy

import (
	"testing"
	"time"
)

// BenchmarkObserve: recording a finished request, routed or not (a 401,
// a 404, a key's 429), takes no lock and allocates nothing once its series
// are cached.
func BenchmarkObserve(b *testing.B) {
	m := newMetrics(&Gateway{}, nil)
	for _, c := range []struct {
		name string
		x    *exchange
	}{
		{"routed", &exchange{endpoint: "chat", model: "demo", status: 200, route: &route{}, elapsed: time.Millisecond}},
		{"unrouted", &exchange{endpoint: "chat", status: 401, elapsed: time.Millisecond}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.observe(c.x)
			}
		})
	}
}
