package openai

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The embeddings API (POST /embeddings): texts in, one vector per text
// out, as JSON numbers or, with "encoding_format":"base64", as the
// base64 of the little-endian float32s. A request decodes into a
// codec.Request's Model, User and Embed; an answer into a
// codec.Response's Vectors and Usage.

type embeddingsWire struct {
	Model          string                 `json:"model"`
	Input          sonic.NoCopyRawMessage `json:"input"`
	EncodingFormat string                 `json:"encoding_format"`
	Dimensions     int                    `json:"dimensions"`
	User           string                 `json:"user"`
}

// DecodeEmbeddingsRequest reads an embeddings request body into r, which
// it resets first. Inputs given as token ids (arrays of integers) are kept
// in r.Embed.Tokens, texts in r.Embed.Texts.
func DecodeEmbeddingsRequest(body []byte, r *codec.Request) *codec.Error {
	r.Reset()
	var w embeddingsWire
	if err := api.Unmarshal(body, &w); err != nil {
		return invalid("", "We could not parse the JSON body of your request. (The body must be valid JSON.)")
	}
	r.Model, r.User, r.Embed.Dimensions = w.Model, w.User, w.Dimensions
	switch w.EncodingFormat {
	case "", "float":
	case "base64":
		r.Embed.Base64 = true
	default:
		return invalid("encoding_format", "'encoding_format' must be 'float' or 'base64'")
	}
	if r.Model == "" {
		return invalid("model", "you must provide a model parameter")
	}
	if w.Dimensions < 0 {
		return invalid("dimensions", "'dimensions' must be at least 1")
	}
	return decodeInput(w.Input, &r.Embed)
}

// decodeInput reads "input": a string, an array of strings, an array of
// token ids or an array of such arrays.
func decodeInput(in []byte, e *codec.Embed) *codec.Error {
	const what = "'input' must be a string, an array of strings, an array of token ids or an array of arrays of token ids"
	switch rawjson.KindOf(in) {
	case rawjson.KindString:
		var s string
		if api.Unmarshal(in, &s) != nil {
			return invalid("input", what)
		}
		e.Texts = []string{s}
		return nil
	case rawjson.KindArray:
	default:
		if len(in) == 0 {
			return invalid("input", "Missing required parameter: 'input'.")
		}
		return invalid("input", what)
	}
	if api.Unmarshal(in, &e.Texts) == nil {
		if len(e.Texts) == 0 {
			return invalid("input", "'input' must not be empty")
		}
		return nil
	}
	e.Texts = nil
	var ids []int
	if api.Unmarshal(in, &ids) == nil {
		if len(ids) == 0 {
			return invalid("input", "'input' must not be empty")
		}
		e.Tokens = [][]int{ids}
		return nil
	}
	if api.Unmarshal(in, &e.Tokens) != nil || len(e.Tokens) == 0 {
		e.Tokens = nil
		return invalid("input", what)
	}
	return nil
}

// AppendEmbeddingsRequest appends the body of an embeddings request for
// r, for an OpenAI-compatible upstream: the vectors are asked for as
// numbers whatever the client wants (the gateway encodes them for it).
// Gemini's task type and title have no place in it: they are dropped.
func AppendEmbeddingsRequest(dst []byte, r *codec.Request) ([]byte, []string) {
	e := &r.Embed
	dst = append(dst, `{"model":`...)
	dst = rawjson.AppendString(dst, r.Model)
	dst = append(dst, `,"input":[`...)
	for i, t := range e.Texts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = rawjson.AppendString(dst, t)
	}
	for i, ids := range e.Tokens {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		for j, id := range ids {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(id), 10)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, ']')
	if e.Dimensions > 0 {
		dst = append(dst, `,"dimensions":`...)
		dst = strconv.AppendInt(dst, int64(e.Dimensions), 10)
	}
	if r.User != "" {
		dst = append(dst, `,"user":`...)
		dst = rawjson.AppendString(dst, r.User)
	}
	var dropped []string
	if e.TaskType != "" {
		dropped = append(dropped, "task_type")
	}
	if e.Title != "" {
		dropped = append(dropped, "title")
	}
	return append(dst, '}'), dropped
}

type embeddingsResponseWire struct {
	Data []struct {
		Index     int                    `json:"index"`
		Embedding sonic.NoCopyRawMessage `json:"embedding"`
	} `json:"data"`
	Usage sonic.NoCopyRawMessage `json:"usage"`
}

// DecodeEmbeddingsResponse reads an upstream's embeddings answer into r:
// each vector at its index (as numbers or base64), and the prompt tokens
// as Usage.Input.
func DecodeEmbeddingsResponse(body []byte, r *codec.Response) error {
	r.Reset()
	var w embeddingsResponseWire
	if err := api.Unmarshal(body, &w); err != nil {
		return fmt.Errorf("openai: cannot read the embeddings response: %w", err)
	}
	r.Vectors = make([][]float32, len(w.Data))
	for _, d := range w.Data {
		if d.Index < 0 || d.Index >= len(w.Data) || r.Vectors[d.Index] != nil {
			return fmt.Errorf("openai: embeddings response: index %d out of place", d.Index)
		}
		v, err := decodeVector(d.Embedding)
		if err != nil {
			return err
		}
		r.Vectors[d.Index] = v
	}
	if len(w.Usage) > 0 && rawjson.KindOf(w.Usage) == rawjson.KindObject {
		u, err := DecodeUsage(w.Usage)
		if err != nil {
			return err
		}
		r.Usage.Input = u.Input
	}
	return nil
}

var errVector = errors.New("openai: an embedding is neither an array of numbers nor base64")

// decodeVector reads an embedding: a JSON array of numbers, or a string of
// base64 little-endian float32s (finite ones).
func decodeVector(b []byte) ([]float32, error) {
	v := []float32{}
	if rawjson.KindOf(b) == rawjson.KindArray {
		if api.Unmarshal(b, &v) != nil {
			return nil, errVector
		}
		return v, nil
	}
	var s string
	if rawjson.KindOf(b) != rawjson.KindString || api.Unmarshal(b, &s) != nil {
		return nil, errVector
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw)%4 != 0 {
		return nil, errVector
	}
	for i := 0; i < len(raw); i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errVector // no JSON number says it
		}
		v = append(v, x)
	}
	return v, nil
}

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
			dst = codec.AppendVector(dst, v)
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
