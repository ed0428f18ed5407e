package gemini

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The methods of a model that the gateway serves.
const (
	MethodGenerate     = "generateContent"
	MethodStream       = "streamGenerateContent"
	MethodCountTokens  = "countTokens"
	modelsSegment      = "models/"
	supportedMethods   = `["generateContent","streamGenerateContent","countTokens"]`
	streamPathSuffix   = ":" + MethodStream + "?alt=sse"
	generatePathSuffix = ":" + MethodGenerate
)

// ParsePath reads the model and the method from a request path such as
// "/v1beta/models/gemini-2.5-flash:streamGenerateContent" (any prefix
// before "models/", a query is ignored). ok is false when the path names no
// model method.
func ParsePath(path string) (model, method string, ok bool) {
	if q := strings.IndexByte(path, '?'); q >= 0 {
		path = path[:q]
	}
	i := strings.Index(path, modelsSegment)
	for i > 0 && path[i-1] != '/' { // "models/" must start a segment
		j := strings.Index(path[i+1:], modelsSegment)
		if j < 0 {
			return "", "", false
		}
		i += 1 + j
	}
	if i < 0 {
		return "", "", false
	}
	rest := path[i+len(modelsSegment):]
	c := strings.LastIndexByte(rest, ':')
	if c <= 0 || c == len(rest)-1 {
		return "", "", false
	}
	model, method = rest[:c], rest[c+1:]
	if strings.IndexByte(model, '/') >= 0 || strings.IndexByte(method, '/') >= 0 {
		return "", "", false
	}
	return model, method, true
}

// AppendPath appends the path of a generateContent call to model
// ("/v1beta/models/{model}:generateContent"), or of a stream
// (":streamGenerateContent?alt=sse"). A "models/" prefix of model is
// accepted; bytes outside [A-Za-z0-9-._~] are percent-encoded.
func AppendPath(dst []byte, model string, stream bool) []byte {
	dst = append(dst, "/v1beta/"+modelsSegment...)
	dst = appendPathSegment(dst, strings.TrimPrefix(model, modelsSegment))
	if stream {
		return append(dst, streamPathSuffix...)
	}
	return append(dst, generatePathSuffix...)
}

func appendPathSegment(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := range len(s) {
		c := s[i]
		if isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hex[c>>4], hex[c&0xf])
	}
	return dst
}

// AppendModelList appends a models.list answer for the given model ids.
func AppendModelList(dst []byte, ids []string) []byte {
	dst = append(dst, `{"models":[`...)
	for i, id := range ids {
		dst = AppendModel(appendComma(dst, i), id)
	}
	return append(dst, "]}"...)
}

// AppendModel appends a models.get answer: a Model with its resource name
// ("models/<id>"), display name and the methods the gateway serves.
func AppendModel(dst []byte, id string) []byte {
	id = strings.TrimPrefix(id, modelsSegment)
	dst = append(dst, `{"name":"`+modelsSegment...)
	dst = rawjson.AppendEscaped(dst, id)
	dst = append(dst, `","displayName":`...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"supportedGenerationMethods":`+supportedMethods+`}`...)
	return dst
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
