package openai

import (
	"strconv"

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

// AppendModelList appends a model list in OpenAI's shape.
func AppendModelList(dst []byte, ids []string, created int64, ownedBy string) []byte {
	dst = append(dst, `{"object":"list","data":[`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = rawjson.AppendString(dst, id)
		dst = append(dst, `,"object":"model","created":`...)
		dst = strconv.AppendInt(dst, created, 10)
		dst = append(dst, `,"owned_by":`...)
		dst = rawjson.AppendString(dst, ownedBy)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}
