package proxy

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

// streamFixture is an upstream stream of n content events, a finish event,
// the usage chunk and [DONE], from the fixture's shapes.
func streamFixture(tb testing.TB, n int) []byte {
	tb.Helper()
	raw, err := os.ReadFile("testdata/chat_stream.sse")
	if err != nil {
		tb.Fatal(err)
	}
	evs := bytes.SplitAfter(raw, []byte("\n\n"))
	var b []byte
	b = append(b, evs[0]...)
	for range n {
		b = append(b, evs[1]...)
	}
	for _, ev := range evs[len(evs)-4:] {
		b = append(b, ev...)
	}
	return b
}

// chunkedReader returns its data in reads of at most size bytes, like a
// network connection.
type chunkedReader struct {
	data []byte
	size int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.size)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// newBenchRelay is a relay over an in-memory upstream body on the OpenAI
// pass-through path: the model renamed, the usage chunk stripped.
func newBenchRelay(body io.Reader, x *exchange) *relay {
	rl := &relay{in: make([]byte, relayBufSize)}
	rl.reset(body, x)
	return rl
}

// reset readies the relay for another pass-through stream of body.
func (rl *relay) reset(body io.Reader, x *exchange) { rl.resetAs(body, x, styleOpenAI.Dialect) }

// resetAs is reset for a stream that d reads.
func (rl *relay) resetAs(body io.Reader, x *exchange, d codec.PassThrough) {
	*rl = relay{x: x, body: body, in: rl.in, tc: rl.tc}
	rl.tc.ResetPass(d, codec.Relay{Model: x.route.escaped}, nil)
}

// countingWriter counts the chunks fasthttp would send.
type countingWriter struct{ writes, bytes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}

func TestRelayRewritesAndStrips(t *testing.T) {
	raw := streamFixture(t, 3)
	x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
	var out bytes.Buffer
	rl := newBenchRelay(&chunkedReader{raw, 7}, x) // odd read sizes split events anywhere
	if _, err := rl.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	want := bytes.ReplaceAll(raw, []byte(`"model":"gpt-4o-mini-2024-07-18"`), []byte(`"model":"fast"`))
	evs := bytes.SplitAfter(want, []byte("\n\n"))
	want = bytes.Join(append(evs[:len(evs)-3:len(evs)-3], evs[len(evs)-2:]...), nil) // minus the usage chunk
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("relayed\n%s\nwant\n%s", out.Bytes(), want)
	}
	if u := rl.tc.Usage(); u.Input != 19 || u.Output != 8 {
		t.Fatalf("usage %+v", u)
	}
}

// BenchmarkRelayEvent is the pass-through cost per SSE event: framing, usage
// check, model rewrite, copy out. Reads of 4 KiB, as from a busy upstream.
func BenchmarkRelayEvent(b *testing.B) {
	const n = 1000
	benchRelayEvents(b, streamFixture(b, n), n+4, styleOpenAI.Dialect)
}

// benchRelayEvents relays raw, a stream of events events that d reads,
// as BenchmarkRelayEvent does.
func benchRelayEvents(b *testing.B, raw []byte, events int, d codec.PassThrough) {
	x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
	rd := &chunkedReader{}
	rl := newBenchRelay(rd, x)
	var w countingWriter
	b.SetBytes(int64(len(raw) / events))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += events {
		rd.data, rd.size = raw, 4096
		rl.resetAs(rd, x, d)
		rl.WriteTo(&w) //nolint:errcheck
	}
	b.ReportMetric(float64(w.writes)/float64(b.N), "writes/event")
}

// anthropicStream is an Anthropic upstream's text stream with n more text
// deltas.
func anthropicStream(tb testing.TB, n int) []byte {
	raw, err := os.ReadFile("../codec/testdata/wire/anthropic/messages_stream_text.sse")
	if err != nil {
		tb.Fatal(err)
	}
	evs := bytes.SplitAfter(raw, []byte("\n\n"))
	const delta = 4 // a content_block_delta with text
	if !bytes.Contains(evs[delta], []byte(`"text_delta"`)) {
		tb.Fatalf("event %d is not a text delta: %s", delta, evs[delta])
	}
	b := bytes.Join(evs[:delta+1], nil)
	b = append(b, bytes.Repeat(evs[delta], n)...)
	return append(b, bytes.Join(evs[delta+1:], nil)...)
}

// BenchmarkRelayTranslatedEvent is the cost per SSE event of a stream
// translated on its way: an Anthropic upstream's text deltas to an OpenAI
// client (framing, decoding, encoding, copy out). Reads of 4 KiB.
func BenchmarkRelayTranslatedEvent(b *testing.B) {
	const n = 1000
	raw := anthropicStream(b, n)
	x := &exchange{style: styleOpenAI, model: "fast", route: &route{public: "fast", escaped: "fast"}}
	rd := &chunkedReader{}
	rl := &relay{in: make([]byte, relayBufSize)}
	dec, enc := styleAnthropic.NewStreamDecoder(), styleOpenAI.NewStreamEncoder()
	info := codec.StreamInfo{ID: "chatcmpl-1", Model: "fast", IncludeUsage: true}
	var w countingWriter
	events := bytes.Count(raw, []byte("\n\n"))
	b.SetBytes(int64(len(raw)) / int64(events))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += events {
		rd.data, rd.size = raw, 4096
		*rl = relay{x: x, body: rd, in: rl.in, tc: rl.tc}
		rl.tc.ResetTranslate(dec, enc, info, nil)
		rl.WriteTo(&w) //nolint:errcheck
	}
}
