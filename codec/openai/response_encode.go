package openai

import (
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Completion is the header every response and chunk of one completion shares.
type Completion struct {
	ID      string
	Created int64
	Model   string
}

func (c *Completion) appendHead(dst []byte, object string) []byte {
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, c.ID)
	dst = append(dst, `,"object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	dst = strconv.AppendInt(dst, c.Created, 10)
	dst = append(dst, `,"model":`...)
	return rawjson.AppendString(dst, c.Model)
}

// AppendChunk appends a chat.completion.chunk with one choice: the assistant
// role when role is set, a content delta, and a finish reason when finish is
// not empty.
func (c *Completion) AppendChunk(dst []byte, role bool, content, finish string) []byte {
	dst = c.appendHead(dst, "chat.completion.chunk")
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	if role {
		dst = append(dst, `"role":"assistant",`...)
	}
	dst = append(dst, `"content":`...)
	dst = rawjson.AppendString(dst, content)
	dst = append(dst, `},"finish_reason":`...)
	dst = rawjson.AppendStringOrNull(dst, finish)
	return append(dst, "}]}"...)
}

// AppendUsageChunk appends the final chunk that stream_options.include_usage
// asks for: no choices, only usage.
func (c *Completion) AppendUsageChunk(dst []byte, u codec.Usage) []byte {
	dst = c.appendHead(dst, "chat.completion.chunk")
	dst = append(dst, `,"choices":[],"usage":`...)
	dst = AppendUsage(dst, u)
	return append(dst, '}')
}

// AppendResponse appends a non-streamed chat.completion with one text choice.
func (c *Completion) AppendResponse(dst []byte, content, finish string, u codec.Usage) []byte {
	dst = c.appendHead(dst, "chat.completion")
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	dst = rawjson.AppendString(dst, content)
	dst = append(dst, `},"finish_reason":`...)
	dst = rawjson.AppendStringOrNull(dst, finish)
	dst = append(dst, `}],"usage":`...)
	dst = AppendUsage(dst, u)
	return append(dst, '}')
}

// AppendUsage appends an OpenAI usage object.
func AppendUsage(dst []byte, u codec.Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Input), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Output), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Total()), 10)
	if u.CachedInput > 0 {
		dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.CachedInput), 10)
		dst = append(dst, '}')
	}
	if u.Reasoning > 0 {
		dst = append(dst, `,"completion_tokens_details":{"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.Reasoning), 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// finishReason names a stop reason in OpenAI's words. OpenAI has no pause,
// error or unknown reason: they are "stop", the value that says the answer
// is complete as it is. A natural (or unknown) end with tool calls is
// "tool_calls", as OpenAI reports it and agent loops expect.
func finishReason(r codec.StopReason, toolCalls bool) string {
	switch r {
	case codec.StopMaxTokens:
		return "length"
	case codec.StopToolUse:
		return "tool_calls"
	case codec.StopContentFilter:
		return "content_filter"
	}
	if toolCalls && (r == codec.StopEnd || r == codec.StopUnknown) {
		return "tool_calls"
	}
	return "stop"
}

// AppendResponse appends r as a chat.completion for an OpenAI client. The
// model is info.Model (the public name; r.Model when empty), the id
// "chatcmpl-" and info.ID (r.ID when empty), created info.Created. Parts
// OpenAI has no place for (images, documents) and the matched stop sequence
// are left out.
func AppendResponse(dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	dst = appendHead(dst, &info, r.ID, r.Model, "chat.completion")
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	text, thinking, calls, signed := 0, 0, 0, false
	for i := range r.Parts {
		switch p := &r.Parts[i]; p.Kind {
		case codec.PartText:
			text++
		case codec.PartThinking:
			thinking++
			signed = signed || p.Signature != ""
		case codec.PartRedactedThinking:
			signed = true
		case codec.PartToolCall:
			calls++
		}
	}
	if text == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendJoined(dst, r.Parts, codec.PartText)
	}
	dst = append(dst, `,"refusal":null`...)
	if thinking > 0 {
		dst = append(dst, `,"reasoning_content":`...)
		dst = appendJoined(dst, r.Parts, codec.PartThinking)
	}
	if signed {
		dst = appendThinkingBlocks(dst, r.Parts, info.Origin)
	}
	if calls > 0 {
		dst = appendToolCalls(dst, r.Parts)
	}
	dst = append(dst, `},"logprobs":null,"finish_reason":"`...)
	dst = append(dst, finishReason(r.Stop, calls > 0)...)
	dst = append(dst, `"}],"usage":`...)
	dst = AppendUsage(dst, r.Usage)
	return append(dst, '}')
}

// appendHead appends the members every response and chunk starts with, from
// "{" to the model.
func appendHead(dst []byte, info *codec.StreamInfo, upstreamID, upstreamModel, object string) []byte {
	id, model := info.ID, info.Model
	if id == "" {
		id = upstreamID
	}
	if model == "" {
		model = upstreamModel
	}
	dst = append(dst, `{"id":"`...)
	if !strings.HasPrefix(id, "chatcmpl-") {
		dst = append(dst, "chatcmpl-"...)
	}
	dst = rawjson.AppendEscaped(dst, id)
	dst = append(dst, `","object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	dst = strconv.AppendInt(dst, info.Created, 10)
	dst = append(dst, `,"model":`...)
	return rawjson.AppendString(dst, model)
}

// appendJoined appends the text of the parts of one kind, joined, as a JSON
// string.
func appendJoined(dst []byte, parts []codec.Part, kind codec.PartKind) []byte {
	dst = append(dst, '"')
	for i := range parts {
		if parts[i].Kind == kind {
			dst = rawjson.AppendEscaped(dst, parts[i].Text)
		}
	}
	return append(dst, '"')
}

// appendThinkingBlocks appends the thinking blocks, their signatures tagged
// when a provider of style origin minted them (codec.TagSignature).
func appendThinkingBlocks(dst []byte, parts []codec.Part, origin string) []byte {
	dst = append(dst, `,"thinking_blocks":[`...)
	first := true
	for i := range parts {
		p := &parts[i]
		if p.Kind != codec.PartThinking && p.Kind != codec.PartRedactedThinking {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendThinkingBlock(dst, p.Kind, p.Text, codec.TagSignature(p.Signature, origin, codec.DialectOpenAI), p.Data)
	}
	return append(dst, ']')
}

func appendThinkingBlock(dst []byte, kind codec.PartKind, text, signature, data string) []byte {
	if kind == codec.PartRedactedThinking {
		dst = append(dst, `{"type":"redacted_thinking","data":`...)
		dst = rawjson.AppendString(dst, data)
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"thinking","thinking":`...)
	dst = rawjson.AppendString(dst, text)
	dst = append(dst, `,"signature":`...)
	dst = rawjson.AppendString(dst, signature)
	return append(dst, '}')
}

func appendToolCalls(dst []byte, parts []codec.Part) []byte {
	dst = append(dst, `,"tool_calls":[`...)
	first := true
	for i := range parts {
		p := &parts[i]
		if p.Kind != codec.PartToolCall {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"id":`...)
		dst = rawjson.AppendString(dst, p.ID)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = rawjson.AppendString(dst, p.Name)
		dst = append(dst, `,"arguments":`...)
		dst = rawjson.AppendString(dst, arguments(p.Arguments))
		dst = append(dst, "}}"...)
	}
	return append(dst, ']')
}
