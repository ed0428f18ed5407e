package gemini

import (
	"bytes"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Dialect is the Gemini generateContent style, as codec.Dialect.
var Dialect codec.Dialect = dialect{}

type dialect struct{}

var httpFacts = codec.HTTP{
	BaseURL:    "https://generativelanguage.googleapis.com",
	KeyEnv:     "GEMINI_API_KEY",
	AuthHeader: "x-goog-api-key",
	KeyHeader:  "x-goog-api-key",
	KeyQuery:   "key",
	KeyHint:    "Send it as '?key=<key>' or 'x-goog-api-key: <key>'.",
	Path: func(dst []byte, op codec.Op, model string, stream bool) ([]byte, bool) {
		switch op {
		case codec.OpGenerate:
			return AppendPath(dst, model, stream), true
		case codec.OpCountTokens:
			return appendMethodPath(dst, model, MethodCountTokens), true
		case codec.OpEmbed:
			// One call for any number of texts: an embedContent request
			// goes up as a batch of one.
			return appendMethodPath(dst, model, MethodBatchEmbed), true
		}
		return dst, false
	},
}

func (dialect) Name() string      { return "gemini" }
func (dialect) HTTP() *codec.HTTP { return &httpFacts }

func (dialect) DecodeRequest(op codec.Op, body []byte, r *codec.Request, _ codec.Options) *codec.Error {
	switch op {
	case codec.OpCountTokens:
		return DecodeCountTokensRequest(body, r)
	case codec.OpEmbed:
		return DecodeEmbedRequest(body, r)
	}
	return DecodeRequest(body, r)
}

func (dialect) AppendRequest(op codec.Op, dst []byte, r *codec.Request, _ codec.Options) ([]byte, []string, *codec.Error) {
	switch op {
	case codec.OpCountTokens:
		return AppendCountTokensRequest(dst, r)
	case codec.OpEmbed:
		return AppendEmbedRequest(dst, r)
	}
	return AppendRequest(dst, r)
}

func (dialect) DecodeResponse(op codec.Op, body []byte, r *codec.Response) error {
	switch op {
	case codec.OpCountTokens:
		return codec.DecodeCount(body, r, DecodeCountTokensResponse)
	case codec.OpEmbed:
		return DecodeEmbedResponse(body, r)
	}
	return DecodeResponse(body, r)
}

func (dialect) AppendResponse(op codec.Op, dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	switch op {
	case codec.OpCountTokens:
		return AppendCountTokensResponse(dst, r.Usage.Input)
	case codec.OpEmbed:
		return AppendEmbedResponse(dst, r.Vectors, info.Request != nil && info.Request.Embed.Single)
	}
	return AppendResponse(dst, r, info)
}

func (dialect) NewStreamDecoder() codec.StreamDecoder { return new(StreamDecoder) }
func (dialect) NewStreamEncoder() codec.StreamEncoder { return new(StreamEncoder) }

func (dialect) AppendError(dst []byte, e *codec.Error) []byte       { return AppendError(dst, e) }
func (dialect) AppendStreamError(dst []byte, e *codec.Error) []byte { return AppendStreamError(dst, e) }
func (dialect) DecodeError(status int, body []byte) (codec.Error, bool) {
	return DecodeError(status, body)
}

// AppendModelList and AppendModel answer as if every model generated
// content; the gateway's own listing says what each one answers
// (AppendModelList of the package, with its methods).
func (dialect) AppendModelList(dst []byte, ids []string, _ int64) []byte {
	return AppendModelList(dst, ids, nil)
}

func (dialect) AppendModel(dst []byte, id string, _ int64) []byte {
	return AppendModel(dst, id, MethodsGenerate)
}

func (dialect) Tagged(body []byte) bool { return HasGatewayMarks(body) }

// AppendModelRequest appends body as it is: Gemini names the model in the
// URL, and in each request of a batchEmbedContents body, which gets model
// there too (AppendBatchModel).
func (dialect) AppendModelRequest(dst, body []byte, model string) []byte {
	if bytes.Contains(body, quotedRequests) {
		if out, ok := AppendBatchModel(dst, body, model); ok {
			return out
		}
	}
	return append(dst, body...)
}

var quotedRequests = []byte(`"requests"`)

// ReadRelayed reads a whole answer's modelVersion and usageMetadata, the
// last of each, as a client's JSON parser reads them.
func (dialect) ReadRelayed(body []byte) (codec.Relayed, bool) {
	return codec.ReadRelayedLast(body, &renaming, readUsage)
}

// readUsage reads a response's usageMetadata; again reports a count
// named twice or with escapes.
func readUsage(v []byte) (_ codec.Usage, ok, again bool) {
	var w wireUsage
	p := parser{b: v}
	if rawjson.KindOf(v) != rawjson.KindObject || !parseUsage(&p, &w) {
		return codec.Usage{}, false, w.again
	}
	return decodeUsage(&w), true, w.again
}

func (dialect) DecodesRelayed() bool { return true }

// renaming is what the relay reads and edits of a chunk: its top-level
// modelVersion and usageMetadata.
var renaming = codec.Renaming{Model: "modelVersion", Usage: "usageMetadata"}

// RelayEvent relays a chunk as it is but for the model, renamed, and,
// when a key repeats, made one that every client reads alike
// (codec.RelayRenamed).
func (dialect) RelayEvent(dst, ev, data []byte, r *codec.Relay) ([]byte, error) {
	return codec.RelayRenamed(dst, ev, data, r, &renaming)
}

// Framing is how a Gemini client reads a stream: SSE with alt=sse, else
// one JSON array of the chunks.
func Framing(array bool) codec.Framing {
	if array {
		return arrayFraming{}
	}
	return codec.SSE
}

type arrayFraming struct{}

func (arrayFraming) Event(dst []byte, n int, _, data []byte) []byte {
	if n == 0 {
		dst = appendArrayStart(dst)
	}
	return appendArrayElement(dst, n, data)
}

func (arrayFraming) End(dst []byte, n int) []byte {
	if n == 0 {
		dst = appendArrayStart(dst)
	}
	return appendArrayEnd(dst)
}

// ReadRateLimit reads how long to wait: Retry-After when the upstream sends
// it, else the RetryInfo detail of its error body. Gemini sends no quota
// headers.
func (dialect) ReadRateLimit(h codec.HeaderReader, body []byte) codec.RateLimit {
	if d := codec.ParseRetryAfter(h.Peek("Retry-After")); d > 0 {
		return codec.RateLimit{RetryAfter: d}
	}
	e, _ := DecodeError(429, body)
	return codec.RateLimit{RetryAfter: e.RateLimit.RetryAfter}
}

// SetRateLimit writes Retry-After; the wait is also in the error body's
// RetryInfo (AppendError), where Gemini's SDKs read it.
func (dialect) SetRateLimit(h codec.HeaderWriter, buf []byte, rl codec.RateLimit) []byte {
	return codec.SetRetryAfter(h, buf, rl)
}
