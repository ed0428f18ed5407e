package testutil

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
)

// EmbeddingAnswer is OpenAI's answer to an embeddings request of one text
// from model, text-embedding-3-small's shape: 1536 dimensions, as floats
// (about 20 KB of JSON) or base64 (8 KB), and the usage of 9 tokens.
func EmbeddingAnswer(model string, base64Encoded bool) []byte {
	return EmbeddingAnswerDims(model, 1536, base64Encoded)
}

// EmbeddingAnswerDims is EmbeddingAnswer with dims dimensions
// (text-embedding-3-large's are 3072).
func EmbeddingAnswerDims(model string, dims int, base64Encoded bool) []byte {
	vec := make([]float32, dims)
	for i := range vec {
		// Signs as irregular as a real embedding's (sin(i) alone changes
		// sign every third value, which a branch predictor learns).
		vec[i] = float32(math.Sin(float64(i*i))) / 40
	}
	b := []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":`)
	if base64Encoded {
		raw := make([]byte, 0, 4*len(vec))
		for _, f := range vec {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
		b = append(append(append(b, '"'), base64.StdEncoding.EncodeToString(raw)...), '"')
	} else {
		b = append(b, '[')
		for i, f := range vec {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(f), 'f', -1, 32)
		}
		b = append(b, ']')
	}
	b = append(b, `}],"model":"`...)
	b = append(b, model...) // a name without JSON escapes
	return append(b, `","usage":{"prompt_tokens":9,"total_tokens":9}}`...)
}
