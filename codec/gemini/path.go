package gemini

import "strings"

// The methods of a model that the gateway serves.
const (
	MethodGenerate    = "generateContent"
	MethodStream      = "streamGenerateContent"
	MethodCountTokens = "countTokens"
	MethodEmbed       = "embedContent"
	MethodBatchEmbed  = "batchEmbedContents"
	modelsSegment     = "models/"
	sseQuery          = "?alt=sse"
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
	if stream {
		return append(appendMethodPath(dst, model, MethodStream), sseQuery...)
	}
	return appendMethodPath(dst, model, MethodGenerate)
}

// appendMethodPath appends the path of a method of model, as AppendPath.
func appendMethodPath(dst []byte, model, method string) []byte {
	dst = append(dst, "/v1beta/"+modelsSegment...)
	dst = appendPathSegment(dst, strings.TrimPrefix(model, modelsSegment))
	return append(append(dst, ':'), method...)
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
