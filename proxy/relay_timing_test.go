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
	return cycledStream(tb, "testdata/chat_stream.sse", n, 1)
}

// wireStreamFixture is api.openai.com's stream of the wire golden
// (codec/testdata/wire/openai/chat_stream_length.sse) with n content events,
// its own cycled: each ends with an obfuscation string of its own length,
// and the text differs from one to the next.
func wireStreamFixture(tb testing.TB, n int) []byte {
	b := cycledStream(tb, "../codec/testdata/wire/openai/chat_stream_length.sse", n, -1)
	if !bytes.Contains(b, []byte(`"obfuscation":"`)) || !bytes.Contains(b, []byte(`"finish_reason":"length"`)) {
		tb.Fatalf("the wire golden has no obfuscation strings, or no finish chunk:\n%s", b)
	}
	return b
}

// cycledStream is the SSE stream of the file at path (a role chunk, content
// chunks, a finish chunk, the usage chunk and [DONE]) with n content events:
// its first kinds content events cycled (all of them when kinds < 0).
func cycledStream(tb testing.TB, path string, n, kinds int) []byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	evs := bytes.SplitAfter(raw, []byte("\n\n"))
	content, tail := evs[1:len(evs)-4], evs[len(evs)-4:] // finish, usage, [DONE] and ""
	if kinds >= 0 {
		content = content[:kinds]
	}
	b := append([]byte(nil), evs[0]...)
	for i := range n {
		b = append(b, content[i%len(content)]...)
	}
	return append(b, bytes.Join(tail, nil)...)
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
	rl := &relay{}
	rl.reset(body, x)
	return rl
}

// reset readies the relay for another pass-through stream of body.
func (rl *relay) reset(body io.Reader, x *exchange) { rl.resetAs(body, x, styleOpenAI.Dialect) }

// resetAs is reset for a stream that d reads.
func (rl *relay) resetAs(body io.Reader, x *exchange, d codec.PassThrough) {
	*rl = relay{x: x, body: body, in: rl.in, inp: rl.inp, tc: rl.tc}
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
	for _, c := range []struct {
		name, model   string
		raw           []byte
		input, output int
	}{
		{"plain", "gpt-4o-mini-2024-07-18", streamFixture(t, 3), 19, 8},
		{"api.openai.com", "gpt-4.1-mini-2025-04-14", wireStreamFixture(t, 30), 31, 12},
	} {
		x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
		var out bytes.Buffer
		rl := newBenchRelay(&chunkedReader{c.raw, 7}, x) // odd read sizes split events anywhere
		if _, err := rl.WriteTo(&out); err != nil {
			t.Fatal(c.name, err)
		}
		want := bytes.ReplaceAll(c.raw, []byte(`"model":"`+c.model+`"`), []byte(`"model":"fast"`))
		evs := bytes.SplitAfter(want, []byte("\n\n"))
		want = bytes.Join(append(evs[:len(evs)-3:len(evs)-3], evs[len(evs)-2:]...), nil) // minus the usage chunk
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("%s: relayed\n%s\nwant\n%s", c.name, out.Bytes(), want)
		}
		if u := rl.tc.Usage(); u.Input != c.input || u.Output != c.output {
			t.Fatalf("%s: usage %+v", c.name, u)
		}
	}
}

// TestRelayWaitsWithoutInputBuffer: a relay waiting for its upstream's next
// event with no part of one kept holds no input buffer (an open stream's
// usual state), and takes one back when the event comes: every event is
// relayed, each written before the wait that follows it.
func TestRelayWaitsWithoutInputBuffer(t *testing.T) {
	evs := splitEvents(wireStreamFixture(t, 30))
	x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
	rd := &eventReader{evs: evs}
	rl := newBenchRelay(rd, x)
	var out bytes.Buffer
	waits, held := 0, 0
	rd.wait = func() {
		rl.beforeWait()
		if rl.in != nil || rl.inp != nil {
			held++
		}
		if n := bytes.Count(out.Bytes(), []byte("\n\n")); n != min(waits, len(evs)-2) {
			t.Fatalf("wait %d: %d events written, want every one before it (the usage chunk is not relayed)", waits, n)
		}
		waits++
	}
	if _, err := rl.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if waits != len(evs) || held != 0 {
		t.Fatalf("%d waits for %d events, %d of them holding the input buffer", waits, len(evs), held)
	}
	want := bytes.Join(append(evs[:len(evs)-2:len(evs)-2], evs[len(evs)-1]), nil) // minus the usage chunk
	want = bytes.ReplaceAll(want, []byte(`"model":"gpt-4.1-mini-2025-04-14"`), []byte(`"model":"fast"`))
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("relayed\n%s\nwant\n%s", out.Bytes(), want)
	}
}

// splitEvents is an SSE stream's events, each with its blank line.
func splitEvents(raw []byte) [][]byte {
	evs := bytes.SplitAfter(raw, []byte("\n\n"))
	if len(evs[len(evs)-1]) == 0 {
		evs = evs[:len(evs)-1]
	}
	return evs
}

// BenchmarkRelayEvent is the pass-through cost per SSE event: framing, usage
// check, model rewrite, copy out. Reads of 4 KiB, as from a busy upstream.
// plain repeats one content chunk without obfuscation; api.openai.com
// cycles the content chunks api.openai.com sends, each with its text and
// an obfuscation string of its own. waited is api.openai.com's stream as a
// model writes it: each event on its own, after a wait for the upstream
// (beforeWait: the relay writes what it has, and hands its input buffer
// back).
func BenchmarkRelayEvent(b *testing.B) {
	const n = 1000
	b.Run("plain", func(b *testing.B) { benchRelayEvents(b, streamFixture(b, n), n+4, styleOpenAI.Dialect) })
	b.Run("api.openai.com", func(b *testing.B) { benchRelayEvents(b, wireStreamFixture(b, n), n+4, styleOpenAI.Dialect) })
	b.Run("waited", func(b *testing.B) {
		evs := splitEvents(wireStreamFixture(b, n))
		x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
		rd := &eventReader{}
		rl := newBenchRelay(rd, x)
		rd.wait = func() { rl.beforeWait() }
		var w countingWriter
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += len(evs) {
			rd.evs = evs
			rl.reset(rd, x)
			rl.WriteTo(&w) //nolint:errcheck
		}
		b.ReportMetric(float64(w.writes)/float64(b.N), "writes/event")
	})
}

// eventReader reads its events one at a time, as a connection reads those
// of an upstream that writes each as it makes it: it runs wait before an
// event, as the upstream connection runs beforeWait before a read would
// wait; a read shorter than the event gets its start, the next the rest.
type eventReader struct {
	evs  [][]byte
	cur  []byte
	wait func()
}

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.cur) == 0 {
		if len(r.evs) == 0 {
			return 0, io.EOF
		}
		r.wait()
		r.cur, r.evs = r.evs[0], r.evs[1:]
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
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
	rl := &relay{}
	dec, enc := styleAnthropic.NewStreamDecoder(), styleOpenAI.NewStreamEncoder()
	info := codec.StreamInfo{ID: "chatcmpl-1", Model: "fast", IncludeUsage: true}
	var w countingWriter
	events := bytes.Count(raw, []byte("\n\n"))
	b.SetBytes(int64(len(raw)) / int64(events))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += events {
		rd.data, rd.size = raw, 4096
		*rl = relay{x: x, body: rd, in: rl.in, inp: rl.inp, tc: rl.tc}
		rl.tc.ResetTranslate(dec, enc, info, nil)
		rl.WriteTo(&w) //nolint:errcheck
	}
}

// BenchmarkRelayStream is the relay's cost per stream of the load harness's
// shape (bench/mock.go): api.openai.com's role chunk, 20 content chunks,
// the finish and usage chunks and [DONE], read 4 KiB at a time, the usage
// chunk stripped. Beside BenchmarkRelayEvent's long streams, it weighs the
// chunks that differ from the one before (role, first text, finish,
// usage), which a short stream checks in proportion more often.
func BenchmarkRelayStream(b *testing.B) {
	const content = 20
	raw := wireStreamFixture(b, content)
	x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
	rd := &chunkedReader{}
	rl := newBenchRelay(rd, x)
	var w countingWriter
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		rd.data, rd.size = raw, 4096
		rl.reset(rd, x)
		rl.WriteTo(&w) //nolint:errcheck
	}
	b.ReportMetric(float64(w.writes)/float64(b.N), "writes/stream")
}
