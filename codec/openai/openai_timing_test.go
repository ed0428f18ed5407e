package openai_test

import (
	"strings"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// BenchmarkRelayEvent is the per-event work of the pass-through relay on one
// typical ~300 B text-delta event: frame, data, usage check, model splice.
func BenchmarkRelayEvent(b *testing.B) {
	ev := []byte("data: " + chunkContent + "\n\n")
	out := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(ev)))
	for b.Loop() {
		out, _ = relayEvent(out[:0], ev, "my-model")
	}
}

// BenchmarkRelayStream relays a whole stream of 40 content chunks as the relay
// loop does, event by event.
func BenchmarkRelayStream(b *testing.B) {
	chunks := []string{chunkRole}
	for range 40 {
		chunks = append(chunks, chunkContent)
	}
	chunks = append(chunks, chunkFinish, chunkUsage, "[DONE]")
	in := []byte("data: " + strings.Join(chunks, "\n\ndata: ") + "\n\n")
	out := make([]byte, 0, 2*len(in))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		out = out[:0]
		for buf := in; len(buf) > 0; {
			var n int
			out, n = relayEvent(out, buf, "my-model")
			buf = buf[n:]
		}
	}
	b.ReportMetric(float64(len(chunks)), "events/op")
}

func BenchmarkModelSpan(b *testing.B) {
	chunk := []byte(chunkContent)
	b.ReportAllocs()
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		openai.ModelSpan(chunk)
	}
}

// BenchmarkParse reads and checks a chat request as the pass-through path
// does: a ~3 KB one with tools, and a ~1 MB one carrying a base64 image.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"3KB", chatRequest3KB(b)},
		{"1MB_image", imageRequest()},
	} {
		b.Run(c.name, func(b *testing.B) {
			var r openai.ChatRequest
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if err := r.Parse(c.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkModelSplice reads a chat request and writes the upstream body with
// a mapped model name, against decoding into a map and encoding it again.
func BenchmarkModelSplice(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"2KB", chatRequest2KB(b)},
		{"1MB_image_model_last", imageRequest()},
	} {
		b.Run(c.name+"/Parse+AppendUpstream", func(b *testing.B) {
			var r openai.ChatRequest
			dst := make([]byte, 0, len(c.body)+256)
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if err := r.Parse(c.body); err != nil {
					b.Fatal(err)
				}
				dst = r.AppendUpstream(dst[:0], c.body, "gpt-4o-mini")
			}
		})
		// The reference: what a gateway that decodes the body would do.
		b.Run(c.name+"/sonic_map", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				var m map[string]any
				if err := sonic.Unmarshal(c.body, &m); err != nil {
					b.Fatal(err)
				}
				m["model"] = "gpt-4o-mini"
				if m["stream"] == true {
					m["stream_options"] = map[string]any{"include_usage": true}
				}
				if _, err := sonic.Marshal(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTagged looks for gateway-tagged signatures in a 3 KB chat
// request, as every pass-through request does.
func BenchmarkTagged(b *testing.B) {
	body := chatRequest3KB(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if openai.Dialect.Tagged(body) {
			b.Fatal("tagged")
		}
	}
}
