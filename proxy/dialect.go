package proxy

import (
	"sync"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/dialects"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// dialect is a style the gateway speaks (its codec.Dialect), with what the
// proxy keeps of it: pools of its stream state machines and its HTTP facts
// as bytes.
type dialect struct {
	codec.Dialect
	http               *codec.HTTP
	authHeader         []byte
	decoders, encoders sync.Pool
}

func newDialect(d codec.Dialect) *dialect {
	s := &dialect{Dialect: d, http: d.HTTP(), authHeader: []byte(d.HTTP().AuthHeader)}
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
