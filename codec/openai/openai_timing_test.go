package openai_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// BenchmarkRelayEvent is the per-event work of the pass-through relay on
// ~300 B text-delta events: frame, data, usage check, model splice. plain
// relays one chunk again and again; api.openai.com two of api.openai.com's
// in turn, whose texts and obfuscation strings differ; escaped_key one
// whose key has an escape.
func BenchmarkRelayEvent(b *testing.B) {
	for _, c := range []struct{ name, a, b string }{
		{"plain", chunkContent, chunkContent},
		{"api.openai.com", chunkWire, chunkWireOther},
		{"escaped_key", chunkEscapedKey, chunkEscapedKey},
	} {
		evs := [2][]byte{[]byte("data: " + c.a + "\n\n"), []byte("data: " + c.b + "\n\n")}
		b.Run(c.name, func(b *testing.B) {
			out := make([]byte, 0, 1024)
			b.ReportAllocs()
			b.SetBytes(int64(len(evs[0])))
			i := 0
			for b.Loop() {
				out, _ = relayEvent(out[:0], evs[i&1], "my-model")
				i++
			}
		})
	}
}

// chunkEscapedKey is chunkContent with its model's key spelled with an
// escape: a chunk the relay reads as clients do, not through its kept
// shape.
var chunkEscapedKey = strings.Replace(chunkContent, `"model"`, `"mod\u0065l"`, 1)

// BenchmarkRelayStream relays a whole stream of 40 content chunks as the relay
// loop does, event by event: plain repeats one chunk without obfuscation,
// api.openai.com cycles the content chunks of its wire golden.
func BenchmarkRelayStream(b *testing.B) {
	plain := []string{chunkRole}
	for range 40 {
		plain = append(plain, chunkContent)
	}
	plain = append(plain, chunkFinish, chunkUsage, "[DONE]")
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"plain", []byte("data: " + strings.Join(plain, "\n\ndata: ") + "\n\n")},
		{"api.openai.com", wireStream(b, 40)},
	} {
		b.Run(c.name, func(b *testing.B) {
			out := make([]byte, 0, 2*len(c.in))
			b.ReportAllocs()
			b.SetBytes(int64(len(c.in)))
			for b.Loop() {
				out = out[:0]
				for buf := c.in; len(buf) > 0; {
					var n int
					out, n = relayEvent(out, buf, "my-model")
					buf = buf[n:]
				}
			}
			b.ReportMetric(float64(len(plain)), "events/op")
		})
	}
}

// wireStream is api.openai.com's stream of the wire golden with n content
// chunks, its own cycled.
func wireStream(tb testing.TB, n int) []byte {
	raw := read(tb, wireDir+"/chat_stream_length.sse")
	evs := bytes.SplitAfter(raw, []byte("\n\n"))
	content, tail := evs[1:len(evs)-4], evs[len(evs)-4:] // finish, usage, [DONE] and ""
	b := append([]byte(nil), evs[0]...)
	for i := range n {
		b = append(b, content[i%len(content)]...)
	}
	return append(b, bytes.Join(tail, nil)...)
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
