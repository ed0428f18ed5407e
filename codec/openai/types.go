package openai

import (
	"sync"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/internal/param"
)

// The wire structs: what the translating decoders read of OpenAI's JSON.
// Nested objects are values, not pointers, so that decoding allocates only
// for slices (and pooled structs keep those). Members that take more than
// one JSON type (content: a string or an array of parts; tool_choice: a
// string or an object; stop: a string or an array) and scalars whose
// absence matters are raw spans of the input (sonic.NoCopyRawMessage), read
// by hand afterwards. Decoded strings point into the input when they have no
// escapes: a decoded value is valid only as long as the input is.

// rawValue is a JSON value as it appears in the input, nil when absent.
type rawValue = sonic.NoCopyRawMessage

// wireRequest is a chat completion request.
type wireRequest struct {
	Model               string         `json:"model"`
	Messages            []wireMessage  `json:"messages"`
	Tools               []wireTool     `json:"tools"`
	ToolChoice          rawValue       `json:"tool_choice"`
	ParallelToolCalls   rawValue       `json:"parallel_tool_calls"`
	Functions           []wireFunction `json:"functions"`
	FunctionCall        rawValue       `json:"function_call"`
	MaxTokens           rawValue       `json:"max_tokens"`
	MaxCompletionTokens rawValue       `json:"max_completion_tokens"`
	Temperature         rawValue       `json:"temperature"`
	TopP                rawValue       `json:"top_p"`
	TopK                rawValue       `json:"top_k"` // vLLM and others; not OpenAI
	Stop                rawValue       `json:"stop"`
	Seed                rawValue       `json:"seed"`
	N                   rawValue       `json:"n"`
	ResponseFormat      wireFormat     `json:"response_format"`
	ReasoningEffort     string         `json:"reasoning_effort"`
	Thinking            wireThinking   `json:"thinking"` // LiteLLM's Anthropic-style extension
	User                string         `json:"user"`
	SafetyIdentifier    string         `json:"safety_identifier"`
	Stream              rawValue       `json:"stream"`
	StreamOptions       struct {
		IncludeUsage rawValue `json:"include_usage"`
	} `json:"stream_options"`

	// Understood but with no canonical equivalent: reported as dropped.
	Metadata             rawValue `json:"metadata"`
	Logprobs             rawValue `json:"logprobs"`
	TopLogprobs          rawValue `json:"top_logprobs"`
	LogitBias            rawValue `json:"logit_bias"`
	PresencePenalty      rawValue `json:"presence_penalty"`
	FrequencyPenalty     rawValue `json:"frequency_penalty"`
	Modalities           rawValue `json:"modalities"`
	Audio                rawValue `json:"audio"`
	Prediction           rawValue `json:"prediction"`
	ServiceTier          rawValue `json:"service_tier"`
	Store                rawValue `json:"store"`
	Verbosity            rawValue `json:"verbosity"`
	WebSearchOptions     rawValue `json:"web_search_options"`
	PromptCacheKey       rawValue `json:"prompt_cache_key"`
	PromptCacheRetention rawValue `json:"prompt_cache_retention"`

	// parts is scratch space for decoding content arrays, one at a time.
	parts []wirePart
}

// Reset empties w for reuse (param.Wire), keeping the capacity of its
// slices and dropping every reference into the last input.
func (w *wireRequest) Reset() {
	msgs := w.Messages[:cap(w.Messages)]
	for i := range msgs {
		msgs[i].reset()
	}
	tools := w.Tools[:cap(w.Tools)]
	clear(tools)
	fns := w.Functions[:cap(w.Functions)]
	clear(fns)
	parts := w.parts[:cap(w.parts)]
	clear(parts)
	*w = wireRequest{Messages: msgs[:0], Tools: tools[:0], Functions: fns[:0], parts: parts[:0]}
}

type wireMessage struct {
	Role             string              `json:"role"`
	Content          rawValue            `json:"content"`
	Name             string              `json:"name"`
	Refusal          string              `json:"refusal"`
	ToolCalls        []wireToolCall      `json:"tool_calls"`
	ToolCallID       string              `json:"tool_call_id"`
	FunctionCall     wireFunctionCall    `json:"function_call"` // legacy
	ReasoningContent string              `json:"reasoning_content"`
	Reasoning        string              `json:"reasoning"`
	ThinkingBlocks   []wireThinkingBlock `json:"thinking_blocks"`
}

func (m *wireMessage) reset() {
	calls := m.ToolCalls[:cap(m.ToolCalls)]
	clear(calls)
	blocks := m.ThinkingBlocks[:cap(m.ThinkingBlocks)]
	clear(blocks)
	*m = wireMessage{ToolCalls: calls[:0], ThinkingBlocks: blocks[:0]}
}

// wirePart is one element of a content array.
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
	File struct {
		FileData string `json:"file_data"`
		FileID   string `json:"file_id"`
		Filename string `json:"filename"`
	} `json:"file"`
	CacheControl wireCacheControl `json:"cache_control"` // LiteLLM's Anthropic-style extension
}

// wireCacheControl is an Anthropic cache breakpoint, as LiteLLM accepts it
// on OpenAI-style content parts and tools.
type wireCacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl"`
}

// wireToolCall is a tool call of an assistant message, a response or (with
// Index) a stream delta.
type wireToolCall struct {
	Index    rawValue         `json:"index"`
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireFunctionCall `json:"function"`
}

type wireFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// wireThinkingBlock is an element of the thinking_blocks extension
// (LiteLLM's carrier for Anthropic thinking blocks and their signatures).
type wireThinkingBlock struct {
	Type      string `json:"type"` // "thinking" or "redacted_thinking"
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
}

// wireTool is an element of "tools".
type wireTool struct {
	Type         string           `json:"type"`
	Function     wireFunction     `json:"function"`
	CacheControl wireCacheControl `json:"cache_control"`
}

// wireFunction is a function definition: tools[].function, or an element
// of the legacy "functions".
type wireFunction struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Parameters  rawValue `json:"parameters"`
	Strict      rawValue `json:"strict"`
}

type wireFormat struct {
	Type       string `json:"type"`
	JSONSchema struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Schema      rawValue `json:"schema"`
		Strict      rawValue `json:"strict"`
	} `json:"json_schema"`
}

// wireToolChoice is the object form of tool_choice (and of the legacy
// function_call, which has only a name).
type wireToolChoice struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
	AllowedTools struct {
		Mode string `json:"mode"`
	} `json:"allowed_tools"`
}

type wireThinking struct {
	Type         string   `json:"type"`
	BudgetTokens rawValue `json:"budget_tokens"`
}

// wireResponse is a chat.completion.
type wireResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int       `json:"index"`
		Message      wireReply `json:"message"`
		FinishReason string    `json:"finish_reason"`
	} `json:"choices"`
	Usage wireFullUsage `json:"usage"`
}

// wireReply is the assistant message of a response, or the delta of a
// stream chunk.
type wireReply struct {
	Role             string              `json:"role"`
	Content          rawValue            `json:"content"` // a string; some servers send parts
	Refusal          string              `json:"refusal"`
	ReasoningContent string              `json:"reasoning_content"`
	Reasoning        string              `json:"reasoning"`
	ToolCalls        []wireToolCall      `json:"tool_calls"`
	FunctionCall     *wireFunctionCall   `json:"function_call"` // legacy
	ThinkingBlocks   []wireThinkingBlock `json:"thinking_blocks"`
}

// wireFullUsage is a usage object with the fields that some
// OpenAI-compatible servers add.
type wireFullUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
}

// wireChunk is a chat.completion.chunk, or an error event of a stream.
type wireChunk struct {
	ID      string            `json:"id"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   rawValue          `json:"usage"` // read by readChunkUsage
	Error   rawValue          `json:"error"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireReply `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

// reset empties w for reuse, keeping the capacity of its slices and
// dropping every reference into the last input.
func (w *wireChunk) reset() {
	choices := w.Choices[:cap(w.Choices)]
	for i := range choices {
		d := &choices[i].Delta
		calls := d.ToolCalls[:cap(d.ToolCalls)]
		clear(calls)
		blocks := d.ThinkingBlocks[:cap(d.ThinkingBlocks)]
		clear(blocks)
		choices[i] = wireChunkChoice{Delta: wireReply{ToolCalls: calls[:0], ThinkingBlocks: blocks[:0]}}
	}
	*w = wireChunk{Choices: choices[:0]}
}

// wireStreamError is the error object of an {"error":{…}} stream event.
type wireStreamError struct {
	Message string   `json:"message"`
	Type    string   `json:"type"`
	Param   rawValue `json:"param"`
	Code    rawValue `json:"code"`
}

var requestPool = sync.Pool{New: func() any { return new(wireRequest) }}

// api decodes with case-sensitive keys and checked strings, as OpenAI does
// (param.API): besides fidelity, this keeps DecodeRequest reading the same
// "model" as ChatRequest.Parse, which the proxy checks against the key's
// allow-list.
var api = param.API

// unmarshalString decodes the JSON value s into v, case-sensitively.
func unmarshalString(s string, v any) error { return param.UnmarshalString(s, v) }

// unmarshal is param.Unmarshal: strict JSON, strings pointing into b.
func unmarshal(b []byte, v any, checked bool) error { return param.Unmarshal(b, v, checked) }
