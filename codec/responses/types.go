package responses

import (
	"sync"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/internal/param"
)

// The wire structs: what the decoder reads of a Responses request.
// Members that take more than one JSON type (input: a string or items;
// content: a string or parts; tool_choice: a string or an object) and
// scalars whose absence matters are raw spans of the input, read by hand
// afterwards. Decoded strings point into the input.

// rawValue is a JSON value as it appears in the input, nil when absent.
type rawValue = sonic.NoCopyRawMessage

type wireRequest struct {
	Model             string     `json:"model"`
	Input             rawValue   `json:"input"`
	Instructions      rawValue   `json:"instructions"`
	Tools             []wireTool `json:"tools"`
	ToolChoice        rawValue   `json:"tool_choice"`
	ParallelToolCalls rawValue   `json:"parallel_tool_calls"`
	MaxOutputTokens   rawValue   `json:"max_output_tokens"`
	Temperature       rawValue   `json:"temperature"`
	TopP              rawValue   `json:"top_p"`
	Reasoning         struct {
		Effort  string `json:"effort"`
		Summary string `json:"summary"`
		// GenerateSummary is summary's deprecated name.
		GenerateSummary string `json:"generate_summary"`
	} `json:"reasoning"`
	Text struct {
		Format    wireFormat `json:"format"`
		Verbosity rawValue   `json:"verbosity"`
	} `json:"text"`
	Metadata           rawValue `json:"metadata"`
	User               string   `json:"user"`
	SafetyIdentifier   string   `json:"safety_identifier"`
	Store              rawValue `json:"store"`
	PreviousResponseID string   `json:"previous_response_id"`
	Stream             rawValue `json:"stream"`

	// Refused: they need the provider's own state.
	Conversation rawValue `json:"conversation"`
	Prompt       rawValue `json:"prompt"`
	Background   rawValue `json:"background"`

	// Understood but with no canonical equivalent: reported as dropped.
	Include              []string `json:"include"`
	MaxToolCalls         rawValue `json:"max_tool_calls"`
	PromptCacheKey       rawValue `json:"prompt_cache_key"`
	PromptCacheRetention rawValue `json:"prompt_cache_retention"`
	ServiceTier          rawValue `json:"service_tier"`
	StreamOptions        rawValue `json:"stream_options"`
	TopLogprobs          rawValue `json:"top_logprobs"`
	Truncation           rawValue `json:"truncation"`
	// OpenAI's own services, named in openai-go v3.96's ResponseNewParams.
	AccessPrograms     rawValue `json:"access_programs"`
	ContextManagement  rawValue `json:"context_management"`
	Moderation         rawValue `json:"moderation"`
	PromptCacheOptions rawValue `json:"prompt_cache_options"`

	// items and parts are scratch space for the input array and for one
	// content array at a time.
	items []wireItem
	parts []wirePart
}

// Reset empties w for reuse (param.Wire), keeping the capacity of its
// slices and dropping every reference into the last input.
func (w *wireRequest) Reset() {
	tools := w.Tools[:cap(w.Tools)]
	clear(tools)
	items := w.items[:cap(w.items)]
	for i := range items {
		sum := items[i].Summary[:cap(items[i].Summary)]
		clear(sum)
		items[i] = wireItem{Summary: sum[:0]}
	}
	parts := w.parts[:cap(w.parts)]
	clear(parts)
	*w = wireRequest{Tools: tools[:0], items: items[:0], parts: parts[:0]}
}

// wireItem is one element of input: a message (with or without "type"),
// a function call or its output, or a reasoning item; what the other
// item types hold is not read.
type wireItem struct {
	Type             string        `json:"type"`
	Role             string        `json:"role"`
	Content          rawValue      `json:"content"`
	CallID           string        `json:"call_id"`
	Name             string        `json:"name"`
	Arguments        string        `json:"arguments"`
	Output           rawValue      `json:"output"`
	Summary          []wireSummary `json:"summary"`
	EncryptedContent string        `json:"encrypted_content"`
}

// wireSummary is a summary_text part of a reasoning item, or a
// reasoning_text part of its content.
type wireSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// wirePart is one element of a message's content, or of a function call
// output given as parts.
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
	FileID   string `json:"file_id"`
	FileData string `json:"file_data"`
	FileURL  string `json:"file_url"`
	Filename string `json:"filename"`
}

// wireTool is an element of tools: a function, or a built-in tool the
// gateway refuses by its type.
type wireTool struct {
	Type        string   `json:"type"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Parameters  rawValue `json:"parameters"`
	Strict      rawValue `json:"strict"`
}

// wireFormat is text.format.
type wireFormat struct {
	Type        string   `json:"type"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Schema      rawValue `json:"schema"`
	Strict      rawValue `json:"strict"`
}

// wireToolChoice is the object form of tool_choice.
type wireToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Mode string `json:"mode"`
}

var requestPool = sync.Pool{New: func() any { return new(wireRequest) }}

// unmarshalString decodes the JSON value s into v as OpenAI reads JSON
// (param.API), strings pointing into s.
var unmarshalString = param.UnmarshalString
