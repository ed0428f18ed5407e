package openai

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The legacy text completions API (POST /completions): a prompt in, text
// out. The gateway relays it to OpenAI-compatible channels as it is; these
// encoders are for the demo channel and tests.

// AppendText appends a non-streamed text_completion with one choice.
func (c *Completion) AppendText(dst []byte, text, finish string, u codec.Usage) []byte {
	dst = c.appendHead(dst, "text_completion")
	dst = appendTextChoice(append(dst, `,"choices":[`...), text, finish)
	dst = append(dst, `],"usage":`...)
	dst = AppendUsage(dst, u)
	return append(dst, '}')
}

// AppendTextChunk appends a streamed text_completion chunk with one choice:
// a piece of text, and a finish reason on the last one.
func (c *Completion) AppendTextChunk(dst []byte, text, finish string) []byte {
	dst = c.appendHead(dst, "text_completion")
	dst = appendTextChoice(append(dst, `,"choices":[`...), text, finish)
	return append(dst, "]}"...)
}

// AppendTextUsageChunk appends the chunk that stream_options.include_usage
// asks for: no choices, the usage.
func (c *Completion) AppendTextUsageChunk(dst []byte, u codec.Usage) []byte {
	dst = c.appendHead(dst, "text_completion")
	dst = append(dst, `,"choices":[],"usage":`...)
	dst = AppendUsage(dst, u)
	return append(dst, '}')
}

func appendTextChoice(dst []byte, text, finish string) []byte {
	dst = append(dst, `{"text":`...)
	dst = rawjson.AppendString(dst, text)
	dst = append(dst, `,"index":0,"logprobs":null,"finish_reason":`...)
	dst = rawjson.AppendStringOrNull(dst, finish)
	return append(dst, '}')
}
