package anthropic

import (
	"errors"
	"fmt"
	"sync"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/decoder"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The wire structs: what the translating decoders read of Anthropic's JSON.
// Nested objects are values, not pointers, so that decoding allocates only
// for slices (and pooled structs keep those). Members that take more than
// one JSON type (content and system: a string or an array of blocks;
// tool_result content likewise), members copied verbatim to the output
// (input, input_schema, schema) and scalars whose absence matters are raw
// spans of the input (sonic.NoCopyRawMessage), read by hand afterwards.
// Decoded strings point into the input when they have no escapes: a decoded
// value is valid only as long as the input is, and the input must not change
// meanwhile.

// rawValue is a JSON value as it appears in the input, nil when absent.
type rawValue = sonic.NoCopyRawMessage

// wireRequest is a Messages (or count_tokens) request.
type wireRequest struct {
	Model         rawValue         `json:"model"`
	MaxTokens     rawValue         `json:"max_tokens"`
	System        rawValue         `json:"system"`
	Messages      []wireMessage    `json:"messages"`
	Tools         []wireTool       `json:"tools"`
	ToolChoice    wireToolChoice   `json:"tool_choice"`
	Temperature   rawValue         `json:"temperature"`
	TopP          rawValue         `json:"top_p"`
	TopK          rawValue         `json:"top_k"`
	StopSequences []string         `json:"stop_sequences"`
	Metadata      wireMetadata     `json:"metadata"`
	Stream        rawValue         `json:"stream"`
	Thinking      wireThinking     `json:"thinking"`
	OutputConfig  wireOutputConfig `json:"output_config"`

	// blocks and inner are scratch space for decoding content arrays, one
	// at a time: blocks for a message or the system prompt, inner for the
	// content of one tool_result inside it.
	blocks []wireBlock
	inner  []wireBlock
	json   jsonDecoder
}

// reset empties w for reuse, keeping the capacity of its slices and
// dropping every reference into the last input.
func (w *wireRequest) reset() {
	msgs := w.Messages[:cap(w.Messages)]
	clear(msgs)
	tools := w.Tools[:cap(w.Tools)]
	clear(tools)
	stops := w.StopSequences[:cap(w.StopSequences)]
	clear(stops)
	blocks := w.blocks[:cap(w.blocks)]
	clear(blocks)
	inner := w.inner[:cap(w.inner)]
	clear(inner)
	*w = wireRequest{Messages: msgs[:0], Tools: tools[:0], StopSequences: stops[:0],
		blocks: blocks[:0], inner: inner[:0], json: w.json}
}

var requestPool = sync.Pool{New: func() any { return new(wireRequest) }}

type wireMessage struct {
	Role    string   `json:"role"`
	Content rawValue `json:"content"`
}

// wireBlock is a content block of a request, a response or a stream's
// content_block_start: the union of the fields of every block type.
type wireBlock struct {
	Type         string           `json:"type"`
	Text         string           `json:"text"`
	Citations    rawValue         `json:"citations"`
	Source       rawValue         `json:"source"` // wireSource; a string in search_result blocks
	Title        string           `json:"title"`
	ID           string           `json:"id"`
	Name         string           `json:"name"`
	Input        rawValue         `json:"input"`
	ToolUseID    string           `json:"tool_use_id"`
	Content      rawValue         `json:"content"`
	IsError      bool             `json:"is_error"`
	Thinking     string           `json:"thinking"`
	Signature    string           `json:"signature"`
	Data         string           `json:"data"`
	CacheControl wireCacheControl `json:"cache_control"`
}

// wireSource is the source of an image or a document.
type wireSource struct {
	Type      string `json:"type"` // base64, url, text (documents), file, content
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// wireCacheControl is a prompt-cache breakpoint.
type wireCacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl"`
}

type wireTool struct {
	Type         string           `json:"type"` // "" or "custom"; anything else is a server or Anthropic-defined tool
	Name         string           `json:"name"`
	Description  string           `json:"description"`
	InputSchema  rawValue         `json:"input_schema"`
	Strict       bool             `json:"strict"`
	CacheControl wireCacheControl `json:"cache_control"`
}

type wireToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

type wireMetadata struct {
	UserID string `json:"user_id"`
}

type wireThinking struct {
	Type         string   `json:"type"` // enabled, disabled, adaptive, between_tools
	BudgetTokens rawValue `json:"budget_tokens"`
	Display      string   `json:"display"` // summarized, omitted
}

type wireOutputConfig struct {
	Effort string `json:"effort"`
	Format struct {
		Type   string   `json:"type"` // json_schema
		Schema rawValue `json:"schema"`
	} `json:"format"`
}

// wireResponse is a Message: a whole response, or the message of a
// stream's message_start.
type wireResponse struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Model        string      `json:"model"`
	Content      []wireBlock `json:"content"`
	StopReason   string      `json:"stop_reason"`
	StopSequence string      `json:"stop_sequence"`
	Usage        wireUsage   `json:"usage"`
	Error        wireErrBody `json:"error"` // when Type is "error"
}

func (w *wireResponse) reset() {
	content := w.Content[:cap(w.Content)]
	clear(content)
	*w = wireResponse{Content: content[:0], Usage: absentUsage}
}

// responseState is a pooled wireResponse with its decoder.
type responseState struct {
	w    wireResponse
	json jsonDecoder
}

var responsePool = sync.Pool{New: func() any { return new(responseState) }}

// wireUsage is a usage object. A count that is absent stays -1: the
// message_delta of older API versions carries output_tokens only.
type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	OutputTokensDetails      struct {
		ThinkingTokens int `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	// bad: the last occurrence of a count is no count (UnmarshalJSON
	// reports it here, not as an error, so that sonic goes on to a later
	// usage object that replaces this one).
	bad bool
	// again: a count is named twice or with escapes, which readers that
	// take the first of a repeated key read otherwise.
	again bool
}

var absentUsage = wireUsage{-1, -1, -1, -1, struct {
	ThinkingTokens int `json:"thinking_tokens"`
}{-1}, false, false}

// usageLens are the lengths of the members of a usage object.
var usageLens = rawjson.KeyLengths("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
	"output_tokens", "output_tokens_details")

// UnmarshalJSON reads a usage object as a client's JSON parser reads it,
// where sonic would merge a repeated usage object into the one before and
// fail on a count that a later occurrence replaces: the object is the last
// occurrence of its member, whole (null: none), and a count its last
// occurrence, keys decoded, bad only when that one is no count.
func (u *wireUsage) UnmarshalJSON(b []byte) error {
	*u = absentUsage
	if rawjson.KindOf(b) == rawjson.KindNull {
		return nil
	}
	var errs [5]error // of each member's last occurrence
	var seen uint8    // a bit per member read
	var keys rawjson.KeySet
	end := rawjson.Object(b, 2, rawjson.AllKeys, func(k []byte, v int, plain bool) int {
		if plain {
			keys.Add(k)
		}
		var end, m int
		switch {
		case rawjson.KeyIs(k, plain, "input_tokens"):
			u.InputTokens, end, errs[0] = usageCount(b, v)
		case rawjson.KeyIs(k, plain, "cache_creation_input_tokens"):
			u.CacheCreationInputTokens, end, errs[1] = usageCount(b, v)
			m = 1
		case rawjson.KeyIs(k, plain, "cache_read_input_tokens"):
			u.CacheReadInputTokens, end, errs[2] = usageCount(b, v)
			m = 2
		case rawjson.KeyIs(k, plain, "output_tokens"):
			u.OutputTokens, end, errs[3] = usageCount(b, v)
			m = 3
		case rawjson.KeyIs(k, plain, "output_tokens_details"):
			u.OutputTokensDetails.ThinkingTokens, end, errs[4] = thinkingCount(b, v, &u.again)
			m = 4
		default:
			u.again = u.again || !plain
			return 0
		}
		u.again = u.again || seen>>m&1 != 0 || !plain
		seen |= 1 << m
		return end
	})
	if end < 0 {
		return errUsage
	}
	u.again = u.again || keys.Repeats(b[:end]) // any other key named twice
	u.bad = errors.Join(errs[:]...) != nil
	return nil
}

var errUsage = errors.New("anthropic: usage is not a JSON object of counts")

// usageCount reads the count at b[v]: -1 (absent) for null. end is just
// past it, below 0 when it is no JSON value.
func usageCount(b []byte, v int) (n, end int, err error) {
	if end = rawjson.CheckValue(b, v, 2); end < 0 {
		return -1, end, nil
	}
	if n, j := rawjson.Count(b, v); j == end {
		return n, end, nil
	}
	if rawjson.KindOf(b[v:end]) == rawjson.KindNull {
		return -1, end, nil
	}
	return -1, end, errUsage
}

// thinkingCount reads the last thinking_tokens of the details object at
// b[v] (null: absent); *again is set when it is named twice or with
// escapes, which a first-wins reader reads otherwise.
func thinkingCount(b []byte, v int, again *bool) (n, end int, err error) {
	n = -1
	switch rawjson.KindOf(b[v:]) {
	case rawjson.KindNull:
		return n, rawjson.CheckValue(b, v, 2), nil
	case rawjson.KindObject:
	default:
		return n, rawjson.CheckValue(b, v, 2), errUsage
	}
	d, seen := b[v:], false
	end = rawjson.Object(d, 3, rawjson.KeyLengths("thinking_tokens"), func(k []byte, w int, plain bool) int {
		if !rawjson.KeyIs(k, plain, "thinking_tokens") {
			return 0
		}
		*again = *again || seen || !plain
		seen = true
		var end int
		n, end, err = usageCount(d, w)
		return end
	})
	if end < 0 {
		return n, end, nil
	}
	return n, v + end, err
}

// wireEvent is the data of a stream event other than a text, thinking or
// tool-argument delta (those take a hand-written path).
type wireEvent struct {
	Type         string       `json:"type"`
	Message      wireResponse `json:"message"`
	Index        int          `json:"index"`
	ContentBlock wireBlock    `json:"content_block"`
	Delta        wireDelta    `json:"delta"`
	Usage        wireUsage    `json:"usage"`
	Error        wireErrBody  `json:"error"`
}

func (w *wireEvent) reset() {
	w.Message.reset()
	*w = wireEvent{Message: w.Message, Index: -1, Usage: absentUsage}
}

// wireDelta is the delta of a content_block_delta or a message_delta.
type wireDelta struct {
	Type         string `json:"type"`
	Text         string `json:"text"`
	PartialJSON  string `json:"partial_json"`
	Thinking     string `json:"thinking"`
	Signature    string `json:"signature"`
	StopReason   string `json:"stop_reason"`
	StopSequence string `json:"stop_sequence"`
}

// wireError is an error body: {"type":"error","error":{…},"request_id":…}.
type wireError struct {
	Type      string      `json:"type"`
	Error     wireErrBody `json:"error"`
	RequestID string      `json:"request_id"`
}

type wireErrBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

var errEmpty = errors.New("empty JSON document")

// jsonDecoder decodes JSON documents with sonic without copying them:
// strings without escapes and raw members point into the document. It
// keeps sonic's decoder state, which sonic.UnmarshalString allocates anew on
// every call.
//
// Like sonic, it checks the structure of raw members but not the strings
// inside them (control characters, escapes): members that are copied to an
// output verbatim are checked with rawjson.ValidStrings where they are read.
type jsonDecoder struct {
	dec decoder.Decoder
}

func (j *jsonDecoder) decode(b []byte, v any) error {
	if len(b) == 0 {
		return errEmpty
	}
	j.dec.Reset(rawjson.UnsafeString(b))
	// Key matching is exact, as the API's: encoding/json's (and sonic's
	// default) case-insensitive match would read "Max_Tokens" as max_tokens.
	j.dec.SetOptions(decoder.OptionCaseSensitive)
	err := j.dec.Decode(v)
	if err == nil {
		err = j.dec.CheckTrailings()
	}
	j.dec.Reset("") // hold no reference to b
	return err
}

// unmarshal decodes b into v with a decoder of its own, for documents off
// the hot path (errors, count_tokens answers).
func unmarshal(b []byte, v any) error {
	var j jsonDecoder
	return j.decode(b, v)
}

// present reports whether a raw member was given a value other than null.
func present(v rawValue) bool { return len(v) > 0 && !isNull(v) }

func isNull(v rawValue) bool { return len(v) == 4 && string(v) == "null" }

// resetBlocks empties s for a new content array. Every element up to its
// capacity is zeroed: sonic reuses elements without clearing the members
// the next array does not set.
func resetBlocks(s []wireBlock) []wireBlock {
	s = s[:cap(s)]
	clear(s)
	return s[:0]
}

// describeJSONError says what is wrong with a document sonic rejected, in
// a sentence for the client (sonic's own message quotes the input).
func describeJSONError(err error) string {
	var syn decoder.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("invalid JSON at byte %d: %s", syn.Pos, syn.Message())
	}
	var mis *decoder.MismatchTypeError
	if errors.As(err, &mis) {
		return fmt.Sprintf("a value of the wrong JSON type at byte %d", mis.Pos)
	}
	return err.Error()
}
