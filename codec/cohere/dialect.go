// Package cohere is Cohere's API as a channel type: its v2 rerank (POST
// /v2/rerank, Bearer), which the gateway serves to OpenAI-style clients at
// /v1/rerank. No client speaks Cohere's API to the gateway, so the methods
// that would answer one (responses, errors, model lists, the pass-through
// path) are never called.
package cohere

import (
	"errors"
	"fmt"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Dialect is Cohere's API, as codec.Dialect.
var Dialect codec.Dialect = dialect{}

type dialect struct{}

var httpFacts = codec.HTTP{
	BaseURL:    "https://api.cohere.com",
	KeyEnv:     "COHERE_API_KEY",
	AuthHeader: "Authorization",
	AuthPrefix: "Bearer ",
	KeyHint:    "Send it as 'Authorization: Bearer <key>'.",
	// Cohere documents no request id header; every answer of its API
	// carries this trace id (and exposes it to browsers), which is what
	// its support can look a request up by.
	RequestIDHeader: "X-Debug-Trace-Id",
	Path: func(dst []byte, op codec.Op, _ string, _ bool) ([]byte, bool) {
		if op == codec.OpRerank {
			return append(dst, "/v2/rerank"...), true
		}
		return dst, false // rerank only: chat, embeddings and the rest are not served through Cohere
	},
}

func (dialect) Name() string      { return "cohere" }
func (dialect) HTTP() *codec.HTTP { return &httpFacts }

func (dialect) AppendRequest(op codec.Op, dst []byte, r *codec.Request, _ codec.Options) ([]byte, []string, *codec.Error) {
	if op != codec.OpRerank {
		return dst, nil, unsupported(op)
	}
	out, e := AppendRerankRequest(dst, r)
	return out, nil, e
}

func (dialect) DecodeResponse(op codec.Op, body []byte, r *codec.Response) error {
	if op != codec.OpRerank {
		return unsupported(op)
	}
	return codec.DecodeRanking(body, r)
}

func (dialect) DecodeError(status int, body []byte) (codec.Error, bool) {
	return DecodeError(status, body)
}

// ReadRateLimit reads a Retry-After, when sent: Cohere documents no quota
// headers.
func (dialect) ReadRateLimit(h codec.HeaderReader, _ []byte) codec.RateLimit {
	return codec.RateLimit{RetryAfter: codec.ParseRetryAfter(h.Peek("Retry-After"))}
}

func (dialect) SetRateLimit(h codec.HeaderWriter, buf []byte, rl codec.RateLimit) []byte {
	return codec.SetRetryAfter(h, buf, rl)
}

// Cohere's rerank does not stream.
func (dialect) NewStreamDecoder() codec.StreamDecoder { return nil }
func (dialect) NewStreamEncoder() codec.StreamEncoder { return nil }

// What answers a client of Cohere's style: none reaches the gateway.

func (dialect) DecodeRequest(codec.Op, []byte, *codec.Request, codec.Options) *codec.Error {
	return &codec.Error{Status: 404, Kind: codec.KindNotFound, Message: "The gateway does not serve Cohere's API to clients."}
}
func (dialect) AppendResponse(_ codec.Op, dst []byte, _ *codec.Response, _ codec.StreamInfo) []byte {
	return dst
}
func (dialect) AppendError(dst []byte, e *codec.Error) []byte       { return AppendError(dst, e) }
func (dialect) AppendStreamError(dst []byte, e *codec.Error) []byte { return AppendError(dst, e) }
func (dialect) AppendModelList(dst []byte, _ []string, _ int64) []byte {
	return dst
}
func (dialect) AppendModel(dst []byte, _ string, _ int64) []byte { return dst }
func (dialect) Tagged([]byte) bool                               { return false }
func (dialect) AppendModelRequest(dst, body []byte, model string) []byte {
	return rawjson.AppendReplaced(dst, body, "model", model)
}
func (dialect) ReadRelayed(body []byte) (codec.Relayed, bool) {
	return codec.ReadRelayedWith(body, func([]byte) (int, int) { return -1, -1 }, codec.RerankUsage)
}
func (dialect) RelayEvent(dst, _, _ []byte, _ *codec.Relay) ([]byte, error) { return dst, errNoStream }
func (dialect) DecodesRelayed() bool                                        { return false }

var errNoStream = errors.New("cohere: rerank does not stream")

func unsupported(op codec.Op) *codec.Error {
	return &codec.Error{Status: 404, Kind: codec.KindNotFound,
		Message: fmt.Sprintf("Cohere channels serve rerank only, not %s.", op)}
}
