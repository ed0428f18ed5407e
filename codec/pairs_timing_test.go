package codec_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/internal/proctime"
)

// The DESIGN §5 budgets, per ordered pair of styles: a 2 KB chat request
// translated (client decode + upstream encode) in ≤ 10 µs and ≤ 20
// allocations; one text-delta stream event transcoded (SSE framing,
// upstream decode and client encode, as the relay does) in ≤ 300 ns and 0
// allocations amortized. Each also reports cpu-ns/op, the process's CPU
// time per operation, steadier than ns/op on a shared machine whose other
// work preempts the benchmark.

// request2KB is each client style's 2 KB chat request (a tool round trip and
// a system prompt), from the dialect's own benchmarks.
var request2KB = map[string]string{
	"openai":    "openai/testdata/chat_2kb.json",
	"anthropic": "anthropic/testdata/messages_2kb.json",
	"gemini":    "gemini/testdata/chat_2kb.json",
	"responses": "responses/testdata/request_2kb.json",
}

func BenchmarkPairsTranslateRequest2KB(b *testing.B) {
	for _, p := range pairs() {
		body := goldentest.Read(b, request2KB[p.from.name()])
		var r codec.Request
		dst := make([]byte, 0, 4*len(body))
		b.Run(filepath.Base(p.dir), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			defer reportCPU(b, proctime.CPU())
			for b.Loop() {
				if _, err := p.from.decodeRequest(codec.OpGenerate, body, &r); err != nil {
					b.Fatal(err)
				}
				r.Model = p.to.model(&r)
				var err *codec.Error
				if dst, _, err = p.to.AppendRequest(codec.OpGenerate, dst[:0], &r, p.to.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// textStream is an upstream text stream of each style and the index of a
// text-delta event in it that is not the first of its block.
var textStream = map[string]struct {
	path  string
	delta int
}{
	"openai":    {"testdata/in/openai/stream_text.sse", 2},
	"anthropic": {"testdata/wire/anthropic/messages_stream_text.sse", 4},
	"gemini":    {"testdata/wire/gemini/stream_sse_text.sse", 1},
}

// streamDeltas is how many text deltas a benchmarked stream has before it
// starts again, off the clock, as the proxy starts each stream with pooled
// state (Reset keeps the buffers): a long answer. The Responses encoder
// keeps a stream's text for its closing events, and would otherwise grow
// a buffer without end, copying and faulting in ever more memory: not a
// cost any one stream pays. (Under cachegrind, which counts every
// instruction, a restart adds ~10 instructions per delta.)
const streamDeltas = 1024

func BenchmarkPairsTranscodeTextDelta(b *testing.B) {
	for _, p := range pairs() {
		ts := textStream[p.to.name()]
		events := goldentest.Events(goldentest.Read(b, ts.path))
		delta := events[ts.delta]
		tc := newTranscoder(p, nil)
		start := func() {
			tc.Reset()
			for _, ev := range events[:ts.delta+1] {
				tc.Write(ev) // the stream up to the delta, and the delta
			}
		}
		start()
		if tc.Err() != nil || !bytes.Contains(tc.Out(), []byte("data: ")) {
			b.Fatalf("the delta transcodes to nothing: %v", tc.Err())
		}
		b.Run(filepath.Base(p.dir), func(b *testing.B) { transcodeDeltas(b, tc, start, [][]byte{delta}) })
	}
}

// transcodeDeltas transcodes the deltas in turn, the stream started again
// (start) every streamDeltas of them.
func transcodeDeltas(b *testing.B, tc *goldentest.Transcoder, start func(), deltas [][]byte) {
	var out []byte
	b.ReportAllocs()
	defer reportCPU(b, proctime.CPU())
	n := 0
	for b.Loop() {
		out, _ = tc.Transcode(out[:0], deltas[n%len(deltas)])
		if n++; n == streamDeltas {
			b.StopTimer()
			start()
			n = 0
			b.StartTimer()
		}
	}
}

// reportCPU reports the process's CPU time since start per operation.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(proctime.CPU()-start)/float64(b.N), "cpu-ns/op")
}
