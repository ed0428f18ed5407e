package anthropic

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// stopReasons names each canonical stop reason as Anthropic does. StopError
// (Gemini's MALFORMED_FUNCTION_CALL, OTHER…) and StopUnknown have no
// Anthropic value: the answer ended, so they are end_turn.
var stopReasons = [...]string{
	codec.StopUnknown:       "end_turn",
	codec.StopEnd:           "end_turn",
	codec.StopMaxTokens:     "max_tokens",
	codec.StopSequence:      "stop_sequence",
	codec.StopToolUse:       "tool_use",
	codec.StopContentFilter: "refusal",
	codec.StopPause:         "pause_turn",
	codec.StopError:         "end_turn",
}

// StopReasonString returns Anthropic's stop_reason for s.
func StopReasonString(s codec.StopReason) string {
	if int(s) < len(stopReasons) {
		return stopReasons[s]
	}
	return "end_turn"
}

// ParseStopReason maps Anthropic's stop_reason to the canonical one.
// model_context_window_exceeded (the context window, not max_tokens, ended
// the answer) becomes StopMaxTokens: both are truncations. A value this
// package does not know is StopUnknown.
func ParseStopReason(s string) codec.StopReason {
	switch s {
	case "end_turn":
		return codec.StopEnd
	case "max_tokens", "model_context_window_exceeded":
		return codec.StopMaxTokens
	case "stop_sequence":
		return codec.StopSequence
	case "tool_use":
		return codec.StopToolUse
	case "pause_turn":
		return codec.StopPause
	case "refusal":
		return codec.StopContentFilter
	}
	return codec.StopUnknown
}

// DecodeResponse reads an upstream's whole Messages response into r (which
// it resets). Content blocks with no canonical equivalent (server tool use
// and results, future block types) are skipped; citations are dropped.
func DecodeResponse(body []byte, r *codec.Response) error {
	r.Reset()
	st := responsePool.Get().(*responseState)
	w := &st.w
	w.reset()
	defer func() {
		w.reset()
		responsePool.Put(st)
	}()
	if err := st.json.decode(body, w); err != nil {
		return fmt.Errorf("anthropic: cannot decode response: %w", err)
	}
	if w.Type != "message" {
		if w.Type == "error" {
			return fmt.Errorf("anthropic: error response: %s: %s", w.Error.Type, w.Error.Message)
		}
		return fmt.Errorf("anthropic: cannot decode response: type %q is not \"message\"", w.Type)
	}
	r.ID, r.Model = w.ID, w.Model
	for i := range w.Content {
		if p, ok := responsePart(&w.Content[i]); ok {
			r.Parts = append(r.Parts, p)
		}
	}
	r.Stop = ParseStopReason(w.StopReason)
	r.StopSequence = w.StopSequence
	var t usageTotals
	if err := t.apply(&w.Usage); err != nil {
		return err
	}
	r.Usage = t.canonical()
	return nil
}

// responsePart is the canonical part of a response content block.
func responsePart(b *wireBlock) (codec.Part, bool) {
	switch b.Type {
	case "text":
		return codec.Part{Kind: codec.PartText, Text: b.Text}, true
	case "thinking":
		return codec.Part{Kind: codec.PartThinking, Text: b.Thinking, Signature: b.Signature}, true
	case "redacted_thinking":
		return codec.Part{Kind: codec.PartRedactedThinking, Data: b.Data}, true
	case "tool_use":
		args, err := toolInput(b.Input)
		if err != nil {
			args = "{}"
		}
		return codec.Part{Kind: codec.PartToolCall, ID: b.ID, Name: b.Name, Arguments: args}, true
	}
	return codec.Part{}, false
}

// usageTotals are Anthropic's token counts: input_tokens excludes the
// tokens read from or written to the prompt cache.
type usageTotals struct {
	input, cacheRead, cacheWrite, output, thinking int
}

// apply overlays the counts that u carries (absent ones are -1); it fails
// on a usage whose last occurrence of a count is no count.
func (t *usageTotals) apply(u *wireUsage) error {
	if u.bad {
		return errUsage
	}
	set := func(dst *int, v int) {
		if v >= 0 {
			*dst = v
		}
	}
	set(&t.input, u.InputTokens)
	set(&t.cacheRead, u.CacheReadInputTokens)
	set(&t.cacheWrite, u.CacheCreationInputTokens)
	set(&t.output, u.OutputTokens)
	set(&t.thinking, u.OutputTokensDetails.ThinkingTokens)
	return nil
}

// canonical is the canonical usage: Input counts the cached tokens too.
func (t *usageTotals) canonical() codec.Usage {
	return codec.Usage{
		Input:       t.input + t.cacheRead + t.cacheWrite,
		CachedInput: t.cacheRead,
		CacheWrite:  t.cacheWrite,
		Output:      t.output,
		Reasoning:   t.thinking,
	}
}

// appendUsage writes a usage object from canonical usage: input_tokens is
// Input less the tokens read from and written to the cache, which have
// their own counts.
func appendUsage(dst []byte, u codec.Usage, output int) []byte {
	write := max(min(u.CacheWrite, u.Input-u.CachedInput), 0)
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(max(u.Input-u.CachedInput-write, 0)), 10)
	dst = append(dst, `,"cache_creation_input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(write), 10)
	dst = append(dst, `,"cache_read_input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(max(u.CachedInput, 0)), 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(max(output, 0)), 10)
	if u.Reasoning > 0 {
		dst = append(dst, `,"output_tokens_details":{"thinking_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.Reasoning), 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// AppendResponse appends r as a client's whole Messages response. The id is
// messageID's and the model info.Model (r.Model when empty). Tool-call ids
// carry their signature (EncodeToolID); thinking keeps its signature,
// tagged when another style's provider minted it; a signature on any
// other part is dropped.
func AppendResponse(dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	id, model := messageID(r.ID, info), info.Model
	if model == "" {
		model = r.Model
	}
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = rawjson.AppendString(dst, model)
	dst = append(dst, `,"content":[`...)
	first := true
	for i := range r.Parts {
		p := &r.Parts[i]
		if !responseBlock(p) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendResponseBlock(dst, p, info.Origin)
	}
	dst = append(dst, `],"stop_reason":"`...)
	dst = append(dst, StopReasonString(r.Stop)...)
	dst = append(dst, `","stop_sequence":`...)
	dst = rawjson.AppendStringOrNull(dst, r.StopSequence)
	dst = append(dst, `,"usage":`...)
	dst = appendUsage(dst, r.Usage, r.Usage.Output)
	return append(dst, '}')
}

// responseBlock reports whether p is shown to the client as a block.
func responseBlock(p *codec.Part) bool {
	switch p.Kind {
	case codec.PartText:
		return p.Text != ""
	case codec.PartThinking:
		return p.Text != "" || p.Signature != ""
	case codec.PartRedactedThinking:
		return p.Data != ""
	case codec.PartToolCall:
		return true
	}
	return false // images, documents and tool results are not answers here
}

// messageID is the id a client sees: the upstream's when it is an
// Anthropic message id, else info.ID (the gateway's msg_ id), since
// clients take ids for msg_… ones.
func messageID(upstream string, info codec.StreamInfo) string {
	if strings.HasPrefix(upstream, "msg_") || info.ID == "" {
		return upstream
	}
	return info.ID
}

func appendResponseBlock(dst []byte, p *codec.Part, origin string) []byte {
	switch p.Kind {
	case codec.PartThinking:
		q := *p
		q.Signature = codec.TagSignature(p.Signature, origin, codec.DialectAnthropic)
		return appendContentBlock(dst, &q)
	case codec.PartText:
		dst = append(dst, `{"type":"text","text":`...)
		dst = rawjson.AppendString(dst, p.Text)
		return append(dst, '}')
	case codec.PartToolCall:
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = appendClientToolID(dst, p.ID, p.Signature)
		dst = append(dst, `,"name":`...)
		dst = rawjson.AppendString(dst, p.Name)
		dst = append(dst, `,"input":`...)
		dst = appendInput(dst, p.Arguments)
		return append(dst, '}')
	}
	return appendContentBlock(dst, p)
}

// appendClientToolID writes the tool_use id a client sees: the id with its
// signature, if any, folded in (EncodeToolID).
func appendClientToolID(dst []byte, id, sig string) []byte {
	return rawjson.AppendString(dst, EncodeToolID(id, sig))
}
