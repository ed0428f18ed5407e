package proxy

import (
	"sync"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// dialect is what the proxy uses of a style's codec: the translation path.
// version is Anthropic's API version (the client's header when decoding,
// the channel's api_version when encoding); other styles ignore it.
type dialect struct {
	// tagged reports whether a client's request holds what the gateway
	// tagged for this style's clients (another provider's signatures): it
	// is then translated even to a channel of the same style.
	tagged            func(body []byte) bool
	decodeRequest     func(body []byte, r *codec.Request, version string) *codec.Error
	appendRequest     func(dst []byte, r *codec.Request, version string) ([]byte, []string, *codec.Error)
	decodeResponse    func(body []byte, r *codec.Response) error
	appendResponse    func(dst []byte, r *codec.Response, info codec.StreamInfo) []byte
	appendError       func(dst []byte, e *codec.Error) []byte
	appendStreamError func(dst []byte, e *codec.Error) []byte
	decodeError       func(status int, body []byte) (codec.Error, bool)
	// appendCount and decodeCount ask the style's API for a token count;
	// nil for a style that has no such endpoint (OpenAI).
	appendCount func(dst []byte, r *codec.Request, version string) ([]byte, []string, *codec.Error)
	decodeCount func(body []byte) (int, error)
	decoders    sync.Pool // codec.StreamDecoder
	encoders    sync.Pool // codec.StreamEncoder
}

var dialects = [...]*dialect{
	styleOpenAI: {
		tagged:        codec.HasSignatureTags,
		decodeRequest: func(b []byte, r *codec.Request, _ string) *codec.Error { return openai.DecodeRequest(b, r) },
		appendRequest: func(dst []byte, r *codec.Request, _ string) ([]byte, []string, *codec.Error) {
			return openai.AppendRequest(dst, r)
		},
		decodeResponse:    openai.DecodeResponse,
		appendResponse:    openai.AppendResponse,
		appendError:       openai.AppendError,
		appendStreamError: openai.AppendStreamError,
		decodeError:       openai.DecodeError,
		decoders:          sync.Pool{New: func() any { return new(openai.StreamDecoder) }},
		encoders:          sync.Pool{New: func() any { return new(openai.StreamEncoder) }},
	},
	styleAnthropic: {
		tagged: codec.HasSignatureTags,
		decodeRequest: func(b []byte, r *codec.Request, v string) *codec.Error {
			return anthropic.DecodeRequestOptions(b, r, anthropic.Options{Version: v})
		},
		appendRequest: func(dst []byte, r *codec.Request, v string) ([]byte, []string, *codec.Error) {
			return anthropic.AppendRequestOptions(dst, r, anthropic.Options{Version: v})
		},
		decodeResponse:    anthropic.DecodeResponse,
		appendResponse:    anthropic.AppendResponse,
		appendError:       anthropic.AppendError,
		appendStreamError: anthropic.AppendStreamError,
		decodeError:       anthropic.DecodeError,
		appendCount: func(dst []byte, r *codec.Request, v string) ([]byte, []string, *codec.Error) {
			return anthropic.AppendCountTokensRequest(dst, r, anthropic.Options{Version: v})
		},
		decodeCount: anthropic.DecodeCountTokensResponse,
		decoders:    sync.Pool{New: func() any { return new(anthropic.StreamDecoder) }},
		encoders:    sync.Pool{New: func() any { return new(anthropic.StreamEncoder) }},
	},
	styleGemini: {
		tagged:        gemini.HasGatewayMarks,
		decodeRequest: func(b []byte, r *codec.Request, _ string) *codec.Error { return gemini.DecodeRequest(b, r) },
		appendRequest: func(dst []byte, r *codec.Request, _ string) ([]byte, []string, *codec.Error) {
			return gemini.AppendRequest(dst, r)
		},
		decodeResponse:    gemini.DecodeResponse,
		appendResponse:    gemini.AppendResponse,
		appendError:       gemini.AppendError,
		appendStreamError: gemini.AppendStreamError,
		decodeError:       gemini.DecodeError,
		appendCount: func(dst []byte, r *codec.Request, _ string) ([]byte, []string, *codec.Error) {
			return gemini.AppendCountTokensRequest(dst, r)
		},
		decodeCount: gemini.DecodeCountTokensResponse,
		decoders:    sync.Pool{New: func() any { return new(gemini.StreamDecoder) }},
		encoders:    sync.Pool{New: func() any { return new(gemini.StreamEncoder) }},
	},
}

func (s style) dialect() *dialect { return dialects[s] }
