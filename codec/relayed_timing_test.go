package codec_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
)

// BenchmarkReadRelayedLast is what the gateway reads of a whole Anthropic
// or Gemini answer it relays (codec.ReadRelayedLast): the check, the last
// model and usage, and whether readers would differ on them.
func BenchmarkReadRelayedLast(b *testing.B) {
	for _, c := range []struct {
		d    codec.Dialect
		body string
	}{
		{anthropic.Dialect, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello! How can I help you today?"}],` +
			`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,` +
			`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":12,"service_tier":"standard"}}`},
		{gemini.Dialect, `{"candidates":[{"content":{"parts":[{"text":"Hello! How can I help you today?"}],"role":"model"},"finishReason":"STOP","index":0}],` +
			`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9,"totalTokenCount":30,"promptTokensDetails":[{"modality":"TEXT","tokenCount":5}],` +
			`"thoughtsTokenCount":16},"modelVersion":"gemini-2.5-flash","responseId":"abc"}`},
	} {
		body := []byte(c.body)
		b.Run(c.d.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r, ok := c.d.ReadRelayed(body); !ok || !r.HasUsage || r.Again {
					b.Fatal("not read")
				}
			}
		})
	}
}
