package gemini

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Methods are the methods a model answers, as a Model's
// supportedGenerationMethods lists them.
type Methods uint8

const (
	// MethodsGenerate: generateContent, streamGenerateContent, countTokens.
	MethodsGenerate Methods = 1 << iota
	// MethodsEmbed: embedContent, batchEmbedContents.
	MethodsEmbed
)

// AppendModelList appends a models.list answer for the given model ids,
// each answering methods[i] (MethodsGenerate, all of them, when methods is
// nil).
func AppendModelList(dst []byte, ids []string, methods []Methods) []byte {
	dst = append(dst, `{"models":[`...)
	for i, id := range ids {
		m := MethodsGenerate
		if methods != nil {
			m = methods[i]
		}
		dst = AppendModel(appendComma(dst, i), id, m)
	}
	return append(dst, "]}"...)
}

// AppendModel appends a models.get answer: a Model with its resource name
// ("models/<id>"), display name and the methods m it answers.
func AppendModel(dst []byte, id string, m Methods) []byte {
	id = strings.TrimPrefix(id, modelsSegment)
	dst = append(dst, `{"name":"`+modelsSegment...)
	dst = rawjson.AppendEscaped(dst, id)
	dst = append(dst, `","displayName":`...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"supportedGenerationMethods":[`...)
	if m&MethodsGenerate != 0 {
		dst = append(dst, `"`+MethodGenerate+`","`+MethodStream+`","`+MethodCountTokens+`"`...)
	}
	if m&MethodsEmbed != 0 {
		if m&MethodsGenerate != 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"`+MethodEmbed+`","`+MethodBatchEmbed+`"`...)
	}
	return append(dst, "]}"...)
}

// AppendCountTokensResponse appends a countTokens answer.
func AppendCountTokensResponse(dst []byte, n int) []byte {
	dst = append(dst, `{"totalTokens":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '}')
}

// AppendCountTokensRequest appends the body of a countTokens request for
// r: the generateContent body of r, with its model, as
// "generateContentRequest", so that system instruction and tools count too.
func AppendCountTokensRequest(dst []byte, r *codec.Request) ([]byte, []string, *codec.Error) {
	dst = append(dst, `{"generateContentRequest":{"model":"`+modelsSegment...)
	dst = rawjson.AppendEscaped(dst, strings.TrimPrefix(r.Model, modelsSegment))
	dst = append(dst, `",`...)
	start := len(dst)
	dst, dropped, err := AppendRequest(dst, r)
	if err != nil {
		return dst, dropped, err
	}
	// AppendRequest wrote a whole object: its members go on after the
	// model's.
	copy(dst[start:], dst[start+1:])
	dst = dst[:len(dst)-1]
	return append(dst, '}'), dropped, nil
}

// DecodeCountTokensResponse reads Gemini's countTokens answer.
func DecodeCountTokensResponse(body []byte) (int, error) {
	f := [...]rawjson.Field{{Key: "totalTokens"}}
	if err := rawjson.Lookup(body, f[:], true); err != nil {
		return 0, fmt.Errorf("gemini: cannot read countTokens response: %w", err)
	}
	n, err := strconv.Atoi(string(body[max(f[0].Start, 0):max(f[0].End, 0)]))
	if err != nil || n < 0 {
		return 0, errors.New("gemini: countTokens response has no totalTokens")
	}
	return n, nil
}

// DecodeCountTokensRequest reads a countTokens body, which holds either
// "contents" (and nothing else that counts) or a whole
// "generateContentRequest", into r as DecodeRequest does.
func DecodeCountTokensRequest(body []byte, r *codec.Request) *codec.Error {
	p := parser{b: body}
	var kb [40]byte
	l, _ := p.object()
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) == "generatecontentrequest" && p.peek() == '{' {
			return DecodeRequest(p.raw(), r)
		}
		p.skip()
	}
	return DecodeRequest(body, r)
}
