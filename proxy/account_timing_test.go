package proxy

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/internal/proctime"
)

// BenchmarkFinish is what a request costs once its answer is read: the
// rate-limit settlement, metrics, the access line (into an asynclog
// writer, as the binary runs) and the usage row handed to a
// store.UsageWriter (over a store that keeps nothing), and the exchange
// back to its pool. The exchange is begun anew each time, as a
// non-stream chat request its one channel answered. cpu-ns/op is the
// process's CPU time per request (the writer's goroutine and the GC
// included), which a busy machine disturbs less than ns/op.
func BenchmarkFinish(b *testing.B) {
	g := newBenchGateway(b, benchRequest{usage: true}, "http://mock/v1", "gpt-4o-mini")
	key := &Key{Name: "bench"}
	r := g.table.Load().routes["gpt-4o-mini"]
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	before := proctime.CPU()
	for b.Loop() {
		x := g.begin(&ctx, "chat.completions", styleOpenAI)
		x.op, x.key, x.model, x.route, x.channel, x.attempts = opGenerate, key, "gpt-4o-mini", r, "mock", 1
		x.status, x.ttfb = 200, 3*time.Millisecond
		x.usage = codec.Usage{Input: 1200, Output: 300}
		g.finish(x)
	}
	b.ReportMetric(float64(proctime.CPU()-before)/float64(b.N), "cpu-ns/op")
}
