package proxy

import "github.com/rosetta-gateway/rosetta/codec"

// style is the API dialect a client speaks; errors and streams answer in it.
type style uint8

const (
	styleOpenAI    style = iota // OpenAI Chat Completions (and the demo channel)
	styleAnthropic              // Anthropic Messages
	styleGemini                 // Gemini generateContent
)

var styleNames = [...]string{styleOpenAI: "openai", styleAnthropic: "anthropic", styleGemini: "gemini"}

func (s style) String() string { return styleNames[s] }

// styleOf is the style a channel of a configured type speaks.
func styleOf(channelType string) style {
	switch channelType {
	case "anthropic":
		return styleAnthropic
	case "gemini":
		return styleGemini
	}
	return styleOpenAI
}

func (s style) appendError(dst []byte, e *codec.Error) []byte {
	return s.dialect().appendError(dst, e)
}

// appendStreamError appends an error event that ends a stream already under
// way (the status line is long gone).
func (s style) appendStreamError(dst []byte, e *codec.Error) []byte {
	return s.dialect().appendStreamError(dst, e)
}
