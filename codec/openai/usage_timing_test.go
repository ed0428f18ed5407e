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
