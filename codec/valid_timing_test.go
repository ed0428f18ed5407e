package codec_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// streamData returns the data of every event of the .sse file at path.
func streamData(tb testing.TB, path string) [][]byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for len(raw) > 0 {
		n := sse.Next(raw)
		if n == 0 {
			break
		}
		if data, multi, ok := sse.Data(raw[:n]); ok && !multi && !sse.IsDone(data) {
			out = append(out, data)
		}
		raw = raw[n:]
	}
	return out
}

// BenchmarkValid times codec.Valid, the check of the pass-through path,
// against sonic.Valid, the check it was (which left strings unchecked), on
// whole responses and on the events of streams of each style (ns/op is per
// event there).
func BenchmarkValid(b *testing.B) {
	const wire = "testdata/wire/"
	type input struct {
		name string
		docs [][]byte
	}
	var inputs []input
	for _, r := range []struct{ name, path string }{
		{"response/openai_1.3KB", "openai/chat_response_tool_calls.json"},
		{"response/anthropic_1.5KB", "anthropic/messages_response_thinking_tool.json"},
		{"response/gemini_2KB", "gemini/generate_response_function_call.json"},
	} {
		doc, err := os.ReadFile(wire + r.path)
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, input{r.name, [][]byte{bytes.TrimSpace(doc)}})
	}
	for _, s := range []struct{ name, path string }{
		{"events/openai", "openai/chat_stream_tool_calls.sse"},
		{"events/anthropic", "anthropic/messages_stream_thinking_tool.sse"},
		{"events/gemini", "gemini/stream_sse_thinking_function.sse"},
	} {
		inputs = append(inputs, input{s.name, streamData(b, wire+s.path)})
	}
	for _, in := range inputs {
		size := 0
		for _, d := range in.docs {
			size += len(d)
		}
		for _, v := range []struct {
			name  string
			valid func([]byte) bool
		}{{"codec.Valid", codec.Valid}, {"sonic.Valid", sonic.Valid}} {
			b.Run(in.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size / len(in.docs)))
				for i := 0; b.Loop(); i++ {
					if !v.valid(in.docs[i%len(in.docs)]) {
						b.Fatalf("invalid: %s", in.docs[i%len(in.docs)])
					}
				}
			})
		}
	}
}
