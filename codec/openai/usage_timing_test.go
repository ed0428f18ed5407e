package openai_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/openai"
)

func BenchmarkDecodeUsage(b *testing.B) {
	u := []byte(`{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":192,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`)
	b.ReportAllocs()
	for b.Loop() {
		openai.DecodeUsage(u)
	}
}

// BenchmarkDecodeUsageOther is DecodeUsage of usages not in OpenAI's chat
// form, which the form is tried on first: an embeddings answer's, one
// without details, and a server's own order.
func BenchmarkDecodeUsageOther(b *testing.B) {
	for _, c := range []struct{ name, u string }{
		{"embeddings", `{"prompt_tokens":8,"total_tokens":8}`},
		{"no_details", `{"prompt_tokens":8,"completion_tokens":3,"total_tokens":11}`},
		{"vllm", `{"prompt_tokens":8,"total_tokens":11,"completion_tokens":3,"prompt_tokens_details":null}`},
	} {
		u := []byte(c.u)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				openai.DecodeUsage(u)
			}
		})
	}
}
