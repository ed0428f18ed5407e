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

// textStream is an upstream text stream of each style, the index of a
// text-delta event in it that is not the first of its block, and that
// delta's text as the wire spells it.
var textStream = map[string]struct {
	path  string
	delta int
	text  string
}{
	"openai":    {"testdata/in/openai/stream_text.sse", 2, `" is"`},
	"anthropic": {"testdata/wire/anthropic/messages_stream_text.sse", 4, `"! Paris is"`},
	"gemini": {"testdata/wire/gemini/stream_sse_text.sse", 1,
		`" and nights near 7 °C. Pack layers, and note that any temperature \u003c 10 °C"`},
}

// A benchmarked stream starts again, off the clock, as the proxy starts
// each stream with pooled state (Reset keeps the buffers), after
// streamDeltas deltas or streamText bytes of text, whichever comes first:
// a long answer, but under the 64 KiB of text a Responses encoder keeps
// as its own. Past that it spills the text into a pooled buffer, copying
// it: with 1024 of Gemini's 76-byte deltas every benchmarked stream was a
// 78 KB answer that paid that copy (~2 of its 3.9 L1 misses a delta),
// where OpenAI's and Anthropic's were 3 and 10 KB.
// BenchmarkPairsTranscodeLongAnswer measures the copy. (Under cachegrind,
// which counts every instruction, a restart adds ~10 instructions per
// delta at 1024 deltas a stream, ~16 at Gemini's 646.)
const (
	streamDeltas = 1024
	streamText   = 48 << 10
)

// deltasPerStream is how many deltas of text bytes each make a stream of
// at most streamDeltas deltas and total bytes of text.
func deltasPerStream(text, total int) int {
	return max(1, min(streamDeltas, total/text))
}

func BenchmarkPairsTranscodeTextDelta(b *testing.B) {
	for _, p := range pairs() {
		tc, start, delta, text := textDeltaStream(b, p)
		b.Run(filepath.Base(p.dir), func(b *testing.B) {
			transcodeDeltas(b, tc, start, [][]byte{delta}, deltasPerStream(text, streamText))
		})
	}
}

// BenchmarkPairsTranscodeLongAnswer is BenchmarkPairsTranscodeTextDelta to
// a Responses client with streams of ~96 KB of text: past the 64 KiB its
// encoder keeps, each copied once into a pooled buffer of 128 KiB.
func BenchmarkPairsTranscodeLongAnswer(b *testing.B) {
	for _, p := range pairs() {
		if p.from.name() != "responses" {
			continue
		}
		tc, start, delta, text := textDeltaStream(b, p)
		b.Run(filepath.Base(p.dir), func(b *testing.B) {
			transcodeDeltas(b, tc, start, [][]byte{delta}, 96<<10/text)
		})
	}
}

// textDeltaStream returns p's transcoder started on the upstream's text
// stream up to its delta (start starts it again), the delta and the length
// of its text.
func textDeltaStream(b *testing.B, p pair) (tc *goldentest.Transcoder, start func(), delta []byte, text int) {
	ts := textStream[p.to.name()]
	events := goldentest.Events(goldentest.Read(b, ts.path))
	delta = events[ts.delta]
	if !bytes.Contains(delta, []byte(ts.text)) {
		b.Fatalf("the delta's text is not %s", ts.text)
	}
	tc = newTranscoder(p, nil)
	start = func() {
		tc.Reset()
		for _, ev := range events[:ts.delta+1] {
			tc.Write(ev) // the stream up to the delta, and the delta
		}
	}
	start()
	if tc.Err() != nil || !bytes.Contains(tc.Out(), []byte("data: ")) {
		b.Fatalf("the delta transcodes to nothing: %v", tc.Err())
	}
	return tc, start, delta, len(ts.text) - 2
}

// transcodeDeltas transcodes the deltas in turn, the stream started again
// (start) every perStream of them.
func transcodeDeltas(b *testing.B, tc *goldentest.Transcoder, start func(), deltas [][]byte, perStream int) {
	var out []byte
	b.ReportAllocs()
	defer reportCPU(b, proctime.CPU())
	n := 0
	for b.Loop() {
		out, _ = tc.Transcode(out[:0], deltas[n%len(deltas)])
		if n++; n == perStream {
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
