package codec_test

import (
	"bytes"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
)

// BenchmarkReframe reframes a text delta as the Gemini stream encoder
// writes it (an event ended by "\r\n\r\n") for a client that reads the
// stream as one JSON array (streamGenerateContent without alt=sse): the
// only framing other than SSE, and so the only input Reframe is given.
func BenchmarkReframe(b *testing.B) {
	var enc gemini.StreamEncoder
	enc.Reset(codec.StreamInfo{ID: "resp-1", Model: "gemini-2.5-flash"})
	ev := enc.Encode(nil, &codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: " world"})
	if !bytes.HasSuffix(ev, []byte("\r\n\r\n")) {
		b.Fatalf("not one Gemini event: %q", ev)
	}
	f := gemini.Framing(true)
	var out []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(ev)))
	for b.Loop() {
		out, _ = codec.Reframe(out[:0], ev, f, 1)
	}
	if !bytes.Contains(out, []byte(`" world"`)) {
		b.Fatalf("reframed to %q", out)
	}
}

// BenchmarkTranscodePassThrough relays one text-delta event of each
// style's stream on the pass-through path (client and channel of one
// style), as the proxy's relay loop hands it to Transcode.
func BenchmarkTranscodePassThrough(b *testing.B) {
	for _, s := range passStream {
		events := goldentest.Events(goldentest.Read(b, s.path))
		delta := events[textStream[s.d.Name()].delta]
		var tc codec.Transcoder
		tc.ResetPass(s.d, codec.Relay{Model: "public-model", IncludeUsage: true, Dec: s.d.NewStreamDecoder()}, nil)
		for _, ev := range events[:textStream[s.d.Name()].delta] {
			tc.Transcode(nil, ev)
		}
		var out []byte
		b.Run(s.d.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var n int
				if out, n = tc.Transcode(out[:0], delta); n != len(delta) || tc.Err() != nil {
					b.Fatal(n, tc.Err())
				}
			}
		})
	}
}
