package proxy

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkParkHeader is what a stream pays for one of its two headers: the
// header parked and, when the stream ends, filled again from the pool; and
// hasStorage alone, which every request's two headers pay.
func BenchmarkParkHeader(b *testing.B) {
	s := newHeaderSpares()
	var h fasthttp.ResponseHeader
	for _, kv := range OpenAIHeaders {
		h.Set(kv[0], kv[1])
	}
	b.Run("park+fill", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.park(&h)
			s.fill(&h)
		}
	})
	b.Run("hasStorage", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !hasStorage(&h) {
				b.Fatal("no storage")
			}
		}
	})
}
