package responses

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// Dialect is the Responses style as a codec.Dialect, for clients only: it
// decodes requests and encodes answers, streams and errors. What a client
// of the style shares with OpenAI's chat clients (the key, errors, rate
// limit headers, model listings) is OpenAI's. No channel type speaks it,
// so the proxy always translates its requests.
var Dialect codec.Dialect = dialect{openai.Dialect}

type dialect struct{ codec.Dialect }

// httpFacts are OpenAI's, with the ids of responses and no upstream
// paths.
var httpFacts = func() codec.HTTP {
	h := *openai.Dialect.HTTP()
	h.IDPrefix, h.BaseURL, h.KeyEnv = IDPrefix, "", ""
	h.Path = func(dst []byte, _ codec.Op, _ string, _ bool) ([]byte, bool) { return dst, false }
	return h
}()

// Name is the style's name; no channel type has it.
func (dialect) Name() string      { return "responses" }
func (dialect) HTTP() *codec.HTTP { return &httpFacts }

func (dialect) DecodeRequest(op codec.Op, body []byte, r *codec.Request, _ codec.Options) *codec.Error {
	if op != codec.OpGenerate {
		return clientOnly(op)
	}
	return DecodeRequest(body, r)
}

// AppendResponse appends a Response object, or for OpCountTokens the
// input_tokens endpoint's count: a count the proxy asked a channel of
// another style for.
func (dialect) AppendResponse(op codec.Op, dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	if op == codec.OpCountTokens {
		return openai.ResponsesCount(dst, r.Usage.Input)
	}
	return AppendResponse(dst, r, info)
}

func (dialect) NewStreamEncoder() codec.StreamEncoder { return new(StreamEncoder) }

func (dialect) AppendStreamError(dst []byte, e *codec.Error) []byte { return AppendStreamError(dst, e) }

// The upstream half: no channel speaks Responses through this package.

func (dialect) AppendRequest(op codec.Op, dst []byte, _ *codec.Request, _ codec.Options) ([]byte, []string, *codec.Error) {
	return dst, nil, clientOnly(op)
}

func (dialect) DecodeResponse(op codec.Op, _ []byte, _ *codec.Response) error { return clientOnly(op) }

// NewStreamDecoder is nil: no upstream stream is read in this style.
func (dialect) NewStreamDecoder() codec.StreamDecoder { return nil }

func clientOnly(op codec.Op) *codec.Error {
	return &codec.Error{Status: 404, Kind: codec.KindNotFound, Message: "The Responses style translates no " + op.String() + " requests to an upstream."}
}
