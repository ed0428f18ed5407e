package openai_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// Translation benchmarks: the DESIGN §5 budgets are ≤ 10 µs and ≤ 20
// allocations for a 2 KB request between two styles (this package's half:
// decode, or encode), ≤ 300 ns and 0 allocations for a text-delta event.

func BenchmarkTranslateRequest(b *testing.B) {
	for _, c := range []struct{ name, path string }{
		{"2KB", "testdata/chat_2kb.json"},
		{"wire_3KB_tools", wireDir + "/chat_request_tools.json"},
	} {
		body := read(b, c.path)
		var r codec.Request
		dst := make([]byte, 0, 2*len(body))
		b.Run(c.name+"/Decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := openai.DecodeRequest(body, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/Append", func(b *testing.B) {
			if err := openai.DecodeRequest(body, &r); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				dst, _, _ = openai.AppendRequest(dst[:0], &r)
			}
		})
		// The proxy's path: Parse (the pass-through's check, which an
		// OpenAI client's request always gets), then the decode, with the
		// string check again or trusting Parse's.
		var cr openai.ChatRequest
		b.Run(c.name+"/Parse+Decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := cr.Parse(body); err != nil {
					b.Fatal(err)
				}
				if err := openai.DecodeRequest(body, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/Parse+DecodeParsed", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := cr.Parse(body); err != nil {
					b.Fatal(err)
				}
				if err := cr.DecodeRequest(body, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/Decode+Append", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := openai.DecodeRequest(body, &r); err != nil {
					b.Fatal(err)
				}
				dst, _, _ = openai.AppendRequest(dst[:0], &r)
			}
		})
	}
}

func BenchmarkTranslateResponse(b *testing.B) {
	body := read(b, wireDir+"/chat_response_tool_calls.json")
	var r codec.Response
	dst := make([]byte, 0, 2*len(body))
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := openai.DecodeResponse(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dst = openai.AppendResponse(dst[:0], &r, testInfo)
		}
	})
}

// steadyDecoder returns a decoder that has seen the role chunk and one text
// delta, as in the middle of a stream.
func steadyDecoder(b *testing.B) *openai.StreamDecoder {
	d := new(openai.StreamDecoder)
	if _, err := d.Decode(nil, nil, []byte(chunkRole)); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Decode(nil, nil, []byte(chunkContent)); err != nil {
		b.Fatal(err)
	}
	return d
}

// textEscaped is a text delta whose content has escapes (newlines, quotes),
// which the decoder unescapes into its buffer.
const textEscaped = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":"\n\n    fmt.Println(\"hi\")"},"logprobs":null,"finish_reason":null}],"usage":null}`

// A tool call whose arguments stay open (the fragments are inside a
// string), so that the same fragment can be decoded again and again.
const (
	toolArgsStart = `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":"{\"text\":\""}}]},"finish_reason":null}],"usage":null}`
	toolArgsDelta = `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"lorem ipsum "}}]},"finish_reason":null}],"usage":null}`
)

func BenchmarkStreamDecode(b *testing.B) {
	for _, c := range []struct{ name, data string }{
		{"text_delta", chunkContent},
		{"text_delta_escaped", textEscaped},
		{"tool_arguments_delta", toolArgsDelta},
	} {
		b.Run(c.name, func(b *testing.B) {
			d := steadyDecoder(b)
			if _, err := d.Decode(nil, nil, []byte(toolArgsStart)); err != nil {
				b.Fatal(err)
			}
			data := []byte(c.data)
			events := make([]codec.Event, 0, 8)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var err error
				if events, err = d.Decode(events[:0], nil, data); err != nil || len(events) == 0 {
					b.Fatal(err, events)
				}
			}
		})
	}
}

func BenchmarkStreamEncode(b *testing.B) {
	for _, c := range []struct {
		name string
		ev   codec.Event
	}{
		{"text_delta", codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: " world"}},
		{"thinking_delta", codec.Event{Kind: codec.EventDelta, Block: codec.PartThinking, Text: " so 9.8 is larger"}},
		{"tool_arguments_delta", codec.Event{Kind: codec.EventDelta, Block: codec.PartToolCall, Arguments: `{"city":"Paris"}`}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var e openai.StreamEncoder
			e.Reset(testInfo)
			out := e.Encode(nil, &codec.Event{Kind: codec.EventStart})
			out = e.Encode(out, &codec.Event{Kind: codec.EventBlockStart, Block: c.ev.Block, ID: "call_1", Name: "f"})
			b.ReportAllocs()
			for b.Loop() {
				out = e.Encode(out[:0], &c.ev)
			}
		})
	}
}

// BenchmarkStreamTranscodeTextDelta decodes an OpenAI text-delta chunk and
// encodes its events as OpenAI chunks again: this package's share of one
// translated event (the other dialect's half runs instead of one of them).
func BenchmarkStreamTranscodeTextDelta(b *testing.B) {
	d := steadyDecoder(b)
	var e openai.StreamEncoder
	e.Reset(testInfo)
	out := e.Encode(nil, &codec.Event{Kind: codec.EventStart})
	data := []byte(chunkContent)
	events := make([]codec.Event, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		events, _ = d.Decode(events[:0], nil, data)
		out = out[:0]
		for i := range events {
			out = e.Encode(out, &events[i])
		}
	}
}

// BenchmarkStreamWhole decodes and re-encodes the wire fixtures, event by
// event, as the proxy's loop does.
func BenchmarkStreamWhole(b *testing.B) {
	for _, name := range []string{"chat_stream_length", "chat_stream_tool_calls", "chat_stream_reasoning"} {
		in := read(b, wireDir+"/"+name+".sse")
		b.Run(name, func(b *testing.B) {
			var d openai.StreamDecoder
			var e openai.StreamEncoder
			events := make([]codec.Event, 0, 16)
			out := make([]byte, 0, 2*len(in))
			n := 0
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				d.Reset()
				e.Reset(testInfo)
				out, n = out[:0], 0
				for buf := in; len(buf) > 0; {
					k := sse.Next(buf)
					if k == 0 {
						break
					}
					data, _, ok := sse.Data(buf[:k])
					buf = buf[k:]
					if !ok {
						continue
					}
					n++
					events, _ = d.Decode(events[:0], nil, data)
					for i := range events {
						out = e.Encode(out, &events[i])
					}
				}
				for _, ev := range d.End(events[:0]) {
					out = e.Encode(out, &ev)
				}
				out = e.End(out)
			}
			b.ReportMetric(float64(n), "events/op")
		})
	}
}
