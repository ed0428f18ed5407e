package gemini_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
)

// Shared fixtures: a ~2 KB chat request with tools and a tool round trip,
// and the stream chunks Gemini sends most (a text delta, with the
// cumulative usage every chunk carries).
const (
	chunkText = `{"candidates": [{"content": {"parts": [{"text": " and nights near 7 °C. Pack layers, and note that any temperature \u003c 10 °C"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": 35,"totalTokenCount": 358,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 12}],"thoughtsTokenCount": 311},"modelVersion": "gemini-2.5-flash","responseId": "eqeJacGPTmrKkdUPtb6YoQ1"}`
	// chunkPlain has no escapes in its text (most deltas have none).
	chunkPlain = `{"candidates": [{"content": {"parts": [{"text": " feels colder near the bay, so bring a warm jacket"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": 42,"totalTokenCount": 365,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 12}],"thoughtsTokenCount": 311},"modelVersion": "gemini-2.5-flash","responseId": "eqeJacGPTmrKkdUPtb6YoQ1"}`
	chunkFirst = `{"candidates": [{"content": {"parts": [{"text": "Yes."}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "eqeJacGPTmrKkdUPtb6YoQ1"}`
)

func chatRequest2KB(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/chat_2kb.json")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkDecodeRequest, BenchmarkAppendRequest and BenchmarkTranslate
// measure a Gemini request on either side of a translation: decoded from a
// Gemini client, encoded for a Gemini upstream, and both.
func BenchmarkDecodeRequest(b *testing.B) {
	body := chatRequest2KB(b)
	var r codec.Request
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := gemini.DecodeRequest(body, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendRequest(b *testing.B) {
	body := chatRequest2KB(b)
	var r codec.Request
	if err := gemini.DecodeRequest(body, &r); err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		dst, _, _ = gemini.AppendRequest(dst[:0], &r)
	}
}

func BenchmarkTranslate(b *testing.B) {
	body := chatRequest2KB(b)
	var r codec.Request
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := gemini.DecodeRequest(body, &r); err != nil {
			b.Fatal(err)
		}
		dst, _, _ = gemini.AppendRequest(dst[:0], &r)
	}
}

// BenchmarkStreamDecode decodes one text-delta chunk into canonical events
// (the decoder in its steady state: started, a text block open).
func BenchmarkStreamDecode(b *testing.B) {
	for _, c := range []struct{ name, chunk string }{{"plain", chunkPlain}, {"escapes", chunkText}} {
		b.Run(c.name, func(b *testing.B) {
			var d gemini.StreamDecoder
			events := make([]codec.Event, 0, 8)
			events, _ = d.Decode(events, nil, []byte(chunkFirst))
			data := []byte(c.chunk)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var err error
				if events, err = d.Decode(events[:0], nil, data); err != nil || len(events) != 1 {
					b.Fatal(err, events)
				}
			}
		})
	}
}

// BenchmarkStreamDecodeCounts decodes text chunks as a stream sends them:
// each with its own text and usage counts (the output and total tokens
// grow from chunk to chunk, of as many digits), which the replay reads.
func BenchmarkStreamDecodeCounts(b *testing.B) {
	var d gemini.StreamDecoder
	events := make([]codec.Event, 0, 8)
	events, _ = d.Decode(events, nil, []byte(chunkFirst))
	var chunks [][]byte
	for k := range 64 {
		text := strings.Repeat("x", k%16)
		chunks = append(chunks, []byte(strings.NewReplacer(" feels colder near the bay", " feels colder"+text,
			`"candidatesTokenCount": 42`, `"candidatesTokenCount": `+strconv.Itoa(20+k),
			`"totalTokenCount": 365`, `"totalTokenCount": `+strconv.Itoa(343+k)).Replace(chunkPlain)))
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		var err error
		if events, err = d.Decode(events[:0], nil, chunks[n%len(chunks)]); err != nil || len(events) != 1 {
			b.Fatal(err, events)
		}
		n++
	}
}

// BenchmarkStreamDecodeShapes decodes text chunks whose shape changes from
// one to the next, so that the fast path reads each in full ("scan"), and a
// text chunk the fast path declines (it has safetyRatings), read by the
// general parser ("general").
func BenchmarkStreamDecodeShapes(b *testing.B) {
	thought := strings.Replace(chunkPlain, `"}],"role"`, `","thought": true}],"role"`, 1)
	rated := strings.Replace(chunkPlain, `"index": 0}]`, `"index": 0,"safetyRatings": []}]`, 1)
	for _, c := range []struct {
		name   string
		chunks []string
	}{{"scan", []string{chunkPlain, thought}}, {"general", []string{rated}}} {
		b.Run(c.name, func(b *testing.B) {
			var d gemini.StreamDecoder
			events := make([]codec.Event, 0, 8)
			events, _ = d.Decode(events, nil, []byte(chunkFirst))
			data := make([][]byte, len(c.chunks))
			for i, s := range c.chunks {
				data[i] = []byte(s)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				var err error
				if events, err = d.Decode(events[:0], nil, data[n%len(data)]); err != nil || len(events) == 0 {
					b.Fatal(err, events)
				}
				n++
			}
		})
	}
}

// BenchmarkStreamEncode encodes one text-delta event as a Gemini SSE chunk.
func BenchmarkStreamEncode(b *testing.B) {
	var s gemini.StreamEncoder
	s.Reset(codec.StreamInfo{Model: "gemini-2.5-flash", ID: "eqeJacGPTmrKkdUPtb6YoQ1", InputTokens: 12})
	e := codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: " and nights near 7 °C. Pack layers, and note that any temperature < 10 °C"}
	dst := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		dst = s.Encode(dst[:0], &e)
	}
}

// BenchmarkTranscode is the per-event work of a Gemini → Gemini-shaped
// transcode of one text delta: decode, then encode each event.
func BenchmarkTranscode(b *testing.B) {
	var d gemini.StreamDecoder
	var s gemini.StreamEncoder
	s.Reset(codec.StreamInfo{})
	events := make([]codec.Event, 0, 8)
	events, _ = d.Decode(events, nil, []byte(chunkFirst))
	data := []byte(chunkPlain)
	dst := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		events, _ = d.Decode(events[:0], nil, data)
		dst = dst[:0]
		for i := range events {
			dst = s.Encode(dst, &events[i])
		}
	}
}

func BenchmarkArraySplitter(b *testing.B) {
	stream, err := os.ReadFile("../testdata/wire/gemini/stream_array.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		var s gemini.ArraySplitter
		for buf := stream; len(buf) > 0; {
			_, n, err := s.Next(buf)
			if err != nil || n == 0 {
				b.Fatal(err)
			}
			buf = buf[n:]
		}
	}
}
