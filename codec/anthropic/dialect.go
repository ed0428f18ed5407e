package anthropic

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Dialect is the Anthropic Messages style, as codec.Dialect.
var Dialect codec.Dialect = dialect{}

type dialect struct{}

var httpFacts = codec.HTTP{
	Quota:           &quotaHeaders,
	IDPrefix:        "msg_",
	BaseURL:         "https://api.anthropic.com",
	KeyEnv:          "ANTHROPIC_API_KEY",
	AuthHeader:      "x-api-key",
	VersionHeader:   "anthropic-version",
	VersionAlias:    "vendor-version",
	DefaultVersion:  Version20230601,
	Versions:        []string{Version20230601, Version20261021},
	KeyHeader:       "x-api-key",
	KeyHint:         "Send it as 'x-api-key: <key>'.",
	OwnStatuses:     map[int]int{529: 503},
	RequestIDHeader: "Request-Id",
	Path: func(dst []byte, op codec.Op, _ string, _ bool) ([]byte, bool) {
		switch op {
		case codec.OpGenerate:
			return append(dst, "/v1/messages"...), true
		case codec.OpCountTokens:
			return append(dst, "/v1/messages/count_tokens"...), true
		}
		return dst, false
	},
}

func (dialect) Name() string      { return "anthropic" }
func (dialect) HTTP() *codec.HTTP { return &httpFacts }

func (dialect) DecodeRequest(op codec.Op, body []byte, r *codec.Request, o codec.Options) *codec.Error {
	return decodeRequest(body, r, Options{Version: o.Version}, op == codec.OpCountTokens)
}

func (dialect) AppendRequest(op codec.Op, dst []byte, r *codec.Request, o codec.Options) ([]byte, []string, *codec.Error) {
	if op == codec.OpCountTokens {
		return AppendCountTokensRequest(dst, r, Options{Version: o.Version})
	}
	return AppendRequestOptions(dst, r, Options{Version: o.Version})
}

func (dialect) DecodeResponse(op codec.Op, body []byte, r *codec.Response) error {
	if op == codec.OpCountTokens {
		return codec.DecodeCount(body, r, DecodeCountTokensResponse)
	}
	return DecodeResponse(body, r)
}

func (dialect) AppendResponse(op codec.Op, dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	if op == codec.OpCountTokens {
		return AppendCountTokensResponse(dst, r.Usage.Input)
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

func (dialect) AppendModelList(dst []byte, ids []string, created int64) []byte {
	return AppendModelList(dst, ids, created)
}

func (dialect) AppendModel(dst []byte, id string, created int64) []byte {
	return AppendModel(dst, id, created)
}

func (dialect) Tagged(body []byte) bool { return codec.HasSignatureTags(body) }

func (dialect) AppendModelRequest(dst, body []byte, model string) []byte {
	return rawjson.AppendReplaced(dst, body, "model", model)
}

// ReadRelayed reads a whole answer's model and usage, the last of each,
// as a client's JSON parser reads them.
func (dialect) ReadRelayed(body []byte) (codec.Relayed, bool) {
	return codec.ReadRelayedLast(body, &renaming, readUsage)
}

// readUsage reads a Message's usage object; again reports a count named
// twice or with escapes.
func readUsage(v []byte) (_ codec.Usage, ok, again bool) {
	w := absentUsage
	var t usageTotals
	if rawjson.KindOf(v) != rawjson.KindObject || unmarshal(v, &w) != nil || t.apply(&w) != nil {
		return codec.Usage{}, false, w.again
	}
	return t.canonical(), true, w.again
}

func (dialect) DecodesRelayed() bool { return true }

// renaming is what the relay reads and edits of an event: the model and
// the usage of a message_delta and of a response, and of the message of a
// message_start; a delta names neither (a reader of the first type reads
// a delta, one of the last what the decoder reads).
var renaming = codec.Renaming{Model: "model", Usage: "usage", Parent: "message", Delta: `{"type":"content_block_delta",`}

// RelayEvent relays an event as it is but for the model, renamed, and,
// when a key repeats, made one that every client reads alike
// (codec.RelayRenamed).
func (dialect) RelayEvent(dst, ev, data []byte, r *codec.Relay) ([]byte, error) {
	return codec.RelayRenamed(dst, ev, data, r, &renaming)
}
