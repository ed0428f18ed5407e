package anthropic_test

import (
	"bytes"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
)

// BenchmarkTranslateRequest2KB is the request half of a translation on a
// ~2 KB Messages request: decode to canonical and encode an upstream body
// (DESIGN §5: ≤ 10 µs, ≤ 20 allocations for decode and encode). The two
// halves are also measured apart, with plain sonic (struct decode and
// encode of the same body) as the reference.
func BenchmarkTranslateRequest2KB(b *testing.B) {
	body := request2KB(b)
	var r codec.Request
	if err := anthropic.DecodeRequest(body, &r); err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 4096)
	b.Run("Decode+Append", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := anthropic.DecodeRequest(body, &r); err != nil {
				b.Fatal(err)
			}
			dst, _, _ = anthropic.AppendRequest(dst[:0], &r)
		}
	})
	b.Run("DecodeRequest", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := anthropic.DecodeRequest(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendRequest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dst, _, _ = anthropic.AppendRequest(dst[:0], &r)
		}
	})
	b.Run("sonic_map_reference", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var m map[string]any
			if err := sonic.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
			if _, err := sonic.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkResponse decodes an upstream response with thinking and a tool
// call and encodes it for a client.
func BenchmarkResponse(b *testing.B) {
	body := readFile(b, wireDir+"/messages_response_thinking_tool.json")
	var r codec.Response
	dst := make([]byte, 0, 4096)
	info := codec.StreamInfo{Model: "claude-public"}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := anthropic.DecodeResponse(body, &r); err != nil {
			b.Fatal(err)
		}
		dst = anthropic.AppendResponse(dst[:0], &r, info)
	}
}

// BenchmarkStreamTextDelta is the per-event work on the bulk of a stream
// (DESIGN §5: ≤ 300 ns and 0 allocations for a text delta, decode and
// encode together).
func BenchmarkStreamTextDelta(b *testing.B) {
	name, data := []byte("content_block_delta"), []byte(textDeltaData)
	var d anthropic.StreamDecoder
	var enc anthropic.StreamEncoder
	enc.Reset(codec.StreamInfo{Model: "claude-public", InputTokens: 10})
	events, _ := d.Decode(nil, []byte("content_block_start"), []byte(blockStartData))
	out := make([]byte, 0, 1024)
	for i := range events {
		out = enc.Encode(out, &events[i])
	}
	events = make([]codec.Event, 0, 4)
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			events, _ = d.Decode(events[:0], name, data)
		}
	})
	ev := events[0]
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out = enc.Encode(out[:0], &ev)
		}
	})
	b.Run("Transcode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			events, _ = d.Decode(events[:0], name, data)
			out = out[:0]
			for i := range events {
				out = enc.Encode(out, &events[i])
			}
		}
	})
}

// BenchmarkStreamOtherEvents transcodes the rarer events (DESIGN §5: ≤ 2 µs
// each): message_start and message_delta with message_stop.
func BenchmarkStreamOtherEvents(b *testing.B) {
	for _, c := range []struct{ name, event, data string }{
		{"message_start", "message_start", messageStartData},
		{"content_block_start", "content_block_start", blockStartData},
		{"message_delta", "message_delta", messageDeltaData},
	} {
		b.Run(c.name, func(b *testing.B) {
			var d anthropic.StreamDecoder
			var enc anthropic.StreamEncoder
			events := make([]codec.Event, 0, 4)
			out := make([]byte, 0, 1024)
			name, data := []byte(c.event), []byte(c.data)
			b.ReportAllocs()
			for b.Loop() {
				d.Reset()
				enc.Reset(codec.StreamInfo{Model: "claude-public"})
				if c.name != "message_start" {
					out = enc.Encode(out[:0], &codec.Event{Kind: codec.EventStart})
				}
				events, _ = d.Decode(events[:0], name, data)
				out = out[:0]
				for i := range events {
					out = enc.Encode(out, &events[i])
				}
			}
		})
	}
}

// BenchmarkStreamWhole transcodes a whole recorded stream with thinking and
// two tool calls, event by event.
func BenchmarkStreamWhole(b *testing.B) {
	in := readFile(b, wireDir+"/messages_stream_thinking_tool.sse")
	evs := frameSSE(b, in)
	var d anthropic.StreamDecoder
	var enc anthropic.StreamEncoder
	events := make([]codec.Event, 0, 8)
	out := make([]byte, 0, 2*len(in))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		d.Reset()
		enc.Reset(codec.StreamInfo{Model: "claude-public"})
		out = out[:0]
		for _, ev := range evs {
			events, _ = d.Decode(events[:0], ev.name, ev.data)
			for i := range events {
				out = enc.Encode(out, &events[i])
			}
		}
		events = d.End(events[:0])
		for i := range events {
			out = enc.Encode(out, &events[i])
		}
		out = enc.End(out)
	}
	b.ReportMetric(float64(len(evs)), "events/op")
}

// BenchmarkRelayEvent is the pass-through relay of an event of each kind
// (RelayRenamed): a text delta with its SSE name and without one (a
// stream that names no events), and a message_delta, which carries the
// usage.
func BenchmarkRelayEvent(b *testing.B) {
	start := namedEvent("message_start", msgStart(`"model":"up1","usage":{"input_tokens":5,"output_tokens":1}`))
	block := namedEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	delta := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there"}}`
	for _, c := range []struct{ name, ev string }{
		{"delta", string(namedEvent("content_block_delta", delta))},
		{"delta_unnamed", "data: " + delta + "\n\n"},
		{"message_delta", string(namedEvent("message_delta", msgDelta(`"usage":{"output_tokens":7}`)))},
	} {
		ev := []byte(c.ev)
		data := ev[bytes.Index(ev, []byte("data: "))+6 : len(ev)-2]
		r := codec.Relay{Model: "pub", Dec: anthropic.Dialect.NewStreamDecoder()}
		for _, e := range [][]byte{start, block} {
			if _, err := anthropic.Dialect.RelayEvent(nil, e, e[bytes.Index(e, []byte("data: "))+6:len(e)-2], &r); err != nil {
				b.Fatal(err)
			}
		}
		out := make([]byte, 0, 1024)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if out, err = anthropic.Dialect.RelayEvent(out[:0], ev, data, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
