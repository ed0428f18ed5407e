package openai

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The embeddings API (POST /embeddings): texts in, one vector per text
// out, as JSON numbers or, with "encoding_format":"base64", as the
// base64 of the little-endian float32s.

// EmbeddingsRequest is an embeddings request decoded. Inputs given as
// token ids (arrays of integers) are kept in Tokens, texts in Texts.
type EmbeddingsRequest struct {
	Model      string
	Texts      []string
	Tokens     [][]int
	Base64     bool // encoding_format "base64"
	Dimensions int  // 0: the model's own
	User       string
}

type embeddingsWire struct {
	Model          string                 `json:"model"`
	Input          sonic.NoCopyRawMessage `json:"input"`
	EncodingFormat string                 `json:"encoding_format"`
	Dimensions     int                    `json:"dimensions"`
	User           string                 `json:"user"`
}

// DecodeEmbeddingsRequest reads an embeddings request body.
func DecodeEmbeddingsRequest(body []byte, r *EmbeddingsRequest) *codec.Error {
	*r = EmbeddingsRequest{}
	var w embeddingsWire
	if err := api.Unmarshal(body, &w); err != nil {
		return invalid("", "We could not parse the JSON body of your request. (The body must be valid JSON.)")
	}
	r.Model, r.Dimensions, r.User = w.Model, w.Dimensions, w.User
	switch w.EncodingFormat {
	case "", "float":
	case "base64":
		r.Base64 = true
	default:
		return invalid("encoding_format", "'encoding_format' must be 'float' or 'base64'")
	}
	if r.Model == "" {
		return invalid("model", "you must provide a model parameter")
	}
	if w.Dimensions < 0 {
		return invalid("dimensions", "'dimensions' must be at least 1")
	}
	return r.decodeInput(w.Input)
}

// decodeInput reads "input": a string, an array of strings, an array of
// token ids or an array of such arrays.
func (r *EmbeddingsRequest) decodeInput(in []byte) *codec.Error {
	const what = "'input' must be a string, an array of strings, an array of token ids or an array of arrays of token ids"
	switch rawjson.KindOf(in) {
	case rawjson.KindString:
		var s string
		if api.Unmarshal(in, &s) != nil {
			return invalid("input", what)
		}
		r.Texts = []string{s}
		return nil
	case rawjson.KindArray:
	default:
		if len(in) == 0 {
			return invalid("input", "Missing required parameter: 'input'.")
		}
		return invalid("input", what)
	}
	if api.Unmarshal(in, &r.Texts) == nil {
		if len(r.Texts) == 0 {
			return invalid("input", "'input' must not be empty")
		}
		return nil
	}
	r.Texts = nil
	var ids []int
	if api.Unmarshal(in, &ids) == nil {
		if len(ids) == 0 {
			return invalid("input", "'input' must not be empty")
		}
		r.Tokens = [][]int{ids}
		return nil
	}
	if api.Unmarshal(in, &r.Tokens) != nil || len(r.Tokens) == 0 {
		r.Tokens = nil
		return invalid("input", what)
	}
	return nil
}

// Inputs is the number of inputs, each of which gets a vector.
func (r *EmbeddingsRequest) Inputs() int { return len(r.Texts) + len(r.Tokens) }

// AppendEmbeddings appends an embeddings response: a list of one vector
// per input, in order, each as numbers or as base64 (asBase64), the model
// and the usage (prompt tokens only: embeddings make no output).
func AppendEmbeddings(dst []byte, model string, vectors [][]float32, asBase64 bool, u codec.Usage) []byte {
	dst = append(dst, `{"object":"list","data":[`...)
	for i, v := range vectors {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"object":"embedding","index":`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, `,"embedding":`...)
		if asBase64 {
			dst = AppendVectorBase64(dst, v)
		} else {
			dst = AppendVector(dst, v)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"model":`...)
	dst = rawjson.AppendString(dst, model)
	dst = append(dst, `,"usage":{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Input), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Input), 10)
	return append(dst, "}}"...)
}

// AppendVector appends v as a JSON array of numbers, each in the fewest
// digits that read back as the same float32.
func AppendVector(dst []byte, v []float32) []byte {
	dst = append(dst, '[')
	for i, x := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendFloat(dst, float64(x), 'g', -1, 32)
	}
	return append(dst, ']')
}

// AppendVectorBase64 appends v as a JSON string: the standard base64 of
// its little-endian float32s, as OpenAI encodes "encoding_format":"base64".
func AppendVectorBase64(dst []byte, v []float32) []byte {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, raw)
	return append(dst, '"')
}
