package openai

import (
	"errors"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Whole responses, both ways. The assistant message maps to parts in this
// order: thinking (thinking_blocks, else reasoning_content or reasoning),
// text (content, then refusal), tool calls. Thinking signatures travel in
// the thinking_blocks extension (LiteLLM's shape): OpenAI's SDKs keep
// unknown response fields, and a client that sends the blocks back in the
// next turn's assistant message gets its signatures to the upstream.

var errNoChoices = errors.New("openai: the response has no choices")

// DecodeResponse decodes an upstream's chat.completion body into r.
// Strings in r may point into body.
func DecodeResponse(body []byte, r *codec.Response) error {
	r.Reset()
	var w wireResponse
	if err := unmarshal(body, &w, false); err != nil {
		return errors.New("openai: cannot decode the response: " + err.Error())
	}
	if len(w.Choices) == 0 {
		return errNoChoices
	}
	c := &w.Choices[0]
	for i := range w.Choices {
		if w.Choices[i].Index == 0 {
			c = &w.Choices[i]
			break
		}
	}
	r.ID, r.Model = w.ID, w.Model
	m := &c.Message
	r.Parts = appendThinking(r.Parts, m.ReasoningContent, m.Reasoning, m.ThinkingBlocks)
	text, err := replyText(m.Content)
	if err != nil {
		return err
	}
	if text != "" {
		r.Parts = append(r.Parts, codec.Part{Kind: codec.PartText, Text: text})
	}
	if m.Refusal != "" {
		r.Parts = append(r.Parts, codec.Part{Kind: codec.PartText, Text: m.Refusal})
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		r.Parts = append(r.Parts, codec.Part{Kind: codec.PartToolCall, ID: tc.ID, Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)})
	}
	if fc := m.FunctionCall; fc != nil && fc.Name != "" {
		r.Parts = append(r.Parts, codec.Part{Kind: codec.PartToolCall, ID: "call_legacy_0", Name: fc.Name, Arguments: arguments(fc.Arguments)})
	}
	r.Stop = stopReason(c.FinishReason, len(m.ToolCalls) > 0 || m.FunctionCall != nil)
	r.Usage, err = w.Usage.canonical()
	return err
}

// appendThinking appends the reasoning of a reply: its thinking_blocks when
// it has any, else one thinking part of its reasoning text. Thinking blocks
// without text take it from reasoning_content (see thinking in
// request_decode.go).
func appendThinking(parts []codec.Part, reasoningContent, reasoning string, blocks []wireThinkingBlock) []codec.Part {
	text := reasoningContent
	if text == "" {
		text = reasoning
	}
	if len(blocks) == 0 {
		if text != "" {
			parts = append(parts, codec.Part{Kind: codec.PartThinking, Text: text})
		}
		return parts
	}
	first, hasText := -1, false
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "thinking":
			if b.Thinking == "" && b.Signature == "" {
				continue // carries nothing
			}
			if first < 0 {
				first = len(parts)
			}
			hasText = hasText || b.Thinking != ""
			parts = append(parts, codec.Part{Kind: codec.PartThinking, Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			parts = append(parts, codec.Part{Kind: codec.PartRedactedThinking, Data: b.Data})
		}
	}
	if first >= 0 && !hasText {
		parts[first].Text = text
	}
	return parts
}

// replyText reads a reply's content: a string, or (from some compatible
// servers) an array of parts whose text parts are joined.
func replyText(content rawValue) (string, error) {
	switch rawjson.KindOf(content) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return "", nil
	case rawjson.KindString:
		if s, err := rawjson.Unquote(content); err == nil {
			return s, nil
		}
	case rawjson.KindArray:
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if unmarshalString(rawjson.UnsafeString(content), &parts) == nil {
			var sb strings.Builder
			for _, p := range parts {
				if p.Type == "text" {
					sb.WriteString(p.Text)
				}
			}
			return sb.String(), nil
		}
	}
	return "", errors.New("openai: the message content is neither a string nor an array of parts")
}

// stopReason maps a finish_reason. Some compatible servers say "stop" (or
// nothing) when the model called tools; with tool calls present that is
// StopToolUse.
// "stop" cannot tell a stop sequence from a natural end: both are StopEnd.
func stopReason(s string, toolCalls bool) codec.StopReason {
	var r codec.StopReason
	switch s {
	case "stop", "eos", "end_turn":
		r = codec.StopEnd
	case "length", "max_tokens", "model_length":
		r = codec.StopMaxTokens
	case "tool_calls", "function_call", "tool_use":
		r = codec.StopToolUse
	case "content_filter", "refusal", "safety":
		r = codec.StopContentFilter
	case "error", "abort":
		r = codec.StopError
	default:
		r = codec.StopUnknown
	}
	if toolCalls && (r == codec.StopEnd || r == codec.StopUnknown) {
		return codec.StopToolUse
	}
	return r
}

// canonical maps the usage; a negative count is no count, nor is one past
// rawjson.MaxCount, as the stream's usage reader (count) and the other styles read
// them: the answer is refused.
func (u *wireFullUsage) canonical() (codec.Usage, error) {
	for _, n := range [...]int{u.PromptTokens, u.CompletionTokens, u.PromptTokensDetails.CachedTokens,
		u.CompletionTokensDetails.ReasoningTokens, u.PromptCacheHitTokens} {
		if n < 0 || n > rawjson.MaxCount {
			return codec.Usage{}, errCount
		}
	}
	cached := u.PromptTokensDetails.CachedTokens
	if cached == 0 {
		cached = u.PromptCacheHitTokens
	}
	return codec.Usage{
		Input:       u.PromptTokens,
		Output:      u.CompletionTokens,
		CachedInput: cached,
		Reasoning:   u.CompletionTokensDetails.ReasoningTokens,
	}, nil
}

var errCount = errors.New("openai: the usage has a token count that is no count (negative, or past 18 digits)")
