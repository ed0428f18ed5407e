package proxy

import (
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/dialects"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/responses"
)

// dialect is a style the gateway speaks (its codec.Dialect), with what the
// proxy keeps of it: pools of its stream state machines and its HTTP facts
// as bytes.
type dialect struct {
	codec.Dialect
	http *codec.HTTP
	// authHeader is the name of the upstream's credential header, spelled
	// as fasthttp normalizes it, so that it is set without normalizing
	// again at every request (SetCanonical).
	authHeader         []byte
	decoders, encoders sync.Pool
	// passed are the headers of an answer a client of the style gets as
	// they are from an upstream of its style (see passHeaders).
	passed []passedHeader
}

// passedHeader is a header name, as fasthttp spells it once read, and
// whether it tells of a quota.
type passedHeader struct {
	name  string
	quota bool
}

func newDialect(d codec.Dialect) *dialect {
	s := &dialect{Dialect: d, http: d.HTTP(), authHeader: fasthttp.AppendNormalizedHeaderKey(nil, d.HTTP().AuthHeader)}
	for _, name := range s.http.PassedHeaders {
		s.passed = append(s.passed, passedHeader{name: name})
	}
	if q := s.http.Quota; q != nil {
		for _, names := range q.Names {
			for _, name := range names {
				s.passed = append(s.passed, passedHeader{name: name, quota: true})
			}
		}
	}
	s.decoders.New = func() any { return d.NewStreamDecoder() }
	s.encoders.New = func() any { return d.NewStreamEncoder() }
	return s
}

// registry maps a channel type to the dialect its channels speak: every
// style of codec/dialects under its own name, and the demo channel, a
// simulated OpenAI-compatible model.
var registry = func() map[string]*dialect {
	r := make(map[string]*dialect, len(dialects.All)+1)
	for _, d := range dialects.All {
		r[d.Name()] = newDialect(d)
	}
	r["demo"] = r[dialects.All[0].Name()]
	return r
}()

// The client styles, by the endpoints the gateway serves for each.
var (
	styleOpenAI    = registry[openai.Dialect.Name()]
	styleAnthropic = registry[anthropic.Dialect.Name()]
	styleGemini    = registry[gemini.Dialect.Name()]
	// styleResponses is OpenAI's Responses API as a client style: no
	// channel type speaks it, so its requests are always translated.
	styleResponses = newDialect(responses.Dialect)
)

// styleOf is the dialect a channel of a configured type speaks.
func styleOf(channelType string) *dialect {
	if d := registry[channelType]; d != nil {
		return d
	}
	return styleOpenAI
}

// ChannelTypes lists the channel types a configuration or the console may
// name, in a stable order.
func ChannelTypes() []string { return append(dialects.Names(), "demo") }

func (s *dialect) String() string { return s.Name() }

// passes reports whether a client of the style gets the header named k
// of an upstream of its own style, and whether it tells of a quota.
func (s *dialect) passes(k []byte) (pass, quota bool) {
	for _, p := range s.passed {
		if string(k) == p.name {
			return true, p.quota
		}
	}
	return false, false
}
