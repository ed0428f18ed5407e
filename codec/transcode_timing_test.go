package codec_test

import (
	"bytes"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
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
