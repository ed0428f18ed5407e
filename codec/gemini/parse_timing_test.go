package gemini

import (
	"testing"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

const parseChunk = `{"candidates": [{"content": {"parts": [{"text": " feels colder near the bay, so bring a warm jacket"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": 42,"totalTokenCount": 365,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 12}],"thoughtsTokenCount": 311},"modelVersion": "gemini-2.5-flash","responseId": "eqeJacGPTmrKkdUPtb6YoQ1"}`

// BenchmarkParse compares the decoders' one validating pass (skip, and
// readChunk, which also decodes) with the validators it replaces, on a
// typical text chunk.
func BenchmarkParse(b *testing.B) {
	data := []byte(parseChunk)
	b.Run("sonic.Valid", func(b *testing.B) {
		for b.Loop() {
			sonic.Valid(data)
		}
	})
	b.Run("ValidStrings", func(b *testing.B) {
		for b.Loop() {
			rawjson.ValidStrings(data)
		}
	})
	b.Run("readChunk", func(b *testing.B) {
		var c wireChunk
		var w wirePart
		var sd strDecoder
		for b.Loop() {
			p := parser{b: data}
			readChunk(&p, &c, &w, &sd, func(*wirePart) {})
		}
	})
	b.Run("skip", func(b *testing.B) {
		for b.Loop() {
			p := parser{b: data}
			p.skip()
		}
	})
}
