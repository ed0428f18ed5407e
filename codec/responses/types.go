package responses

import (
	"sync"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The wire structs: what the decoder reads of a Responses request
// (request_read.go). Members that take more than one JSON type (input: a
// string or items; content: a string or parts; tool_choice: a string or an
// object) and scalars whose absence matters are raw spans of the input,
// read by hand afterwards. Decoded strings point into the input.

// rawValue is a JSON value as it appears in the input, nil when absent.
type rawValue = []byte

type wireRequest struct {
	Model             string
	Input             rawValue
	Instructions      rawValue
	Tools             []wireTool
	ToolChoice        rawValue
	ParallelToolCalls rawValue
	MaxOutputTokens   rawValue
	Temperature       rawValue
	TopP              rawValue
	Reasoning         wireReasoning
	Text              wireText
	Metadata          rawValue
	User              string
	SafetyIdentifier  string
	Store             rawValue
	// PreviousResponseID is previous_response_id.
	PreviousResponseID string
	Stream             rawValue

	// Refused: they need the provider's own state.
	Conversation rawValue
	Prompt       rawValue
	Background   rawValue

	// Understood but with no canonical equivalent: reported as dropped.
	Include              []string
	MaxToolCalls         rawValue
	PromptCacheKey       rawValue
	PromptCacheRetention rawValue
	ServiceTier          rawValue
	StreamOptions        rawValue
	TopLogprobs          rawValue
	Truncation           rawValue
	// OpenAI's own services, named in openai-go v3.96's ResponseNewParams.
	AccessPrograms     rawValue
	ContextManagement  rawValue
	Moderation         rawValue
	PromptCacheOptions rawValue

	// items are input's, when an array; inputBad is the first of their
	// members of the wrong type, reported when the input is read; bad is
	// the first other member of the wrong type.
	items    []wireItem
	inputBad mismatch
	bad      mismatch
	// parts and summaries are scratch space for one content array at a
	// time, choice for an object tool_choice (a local would go to the
	// heap: readObject fills it through an interface).
	parts     []wirePart
	summaries []wireSummary
	choice    wireToolChoice
}

func (w *wireRequest) member(key string) target {
	switch key {
	case "model":
		return target{s: &w.Model}
	case "instructions":
		return target{raw: &w.Instructions}
	case "tool_choice":
		return target{raw: &w.ToolChoice}
	case "parallel_tool_calls":
		return target{raw: &w.ParallelToolCalls}
	case "max_output_tokens":
		return target{raw: &w.MaxOutputTokens}
	case "temperature":
		return target{raw: &w.Temperature}
	case "top_p":
		return target{raw: &w.TopP}
	case "metadata":
		return target{raw: &w.Metadata}
	case "user":
		return target{s: &w.User}
	case "safety_identifier":
		return target{s: &w.SafetyIdentifier}
	case "store":
		return target{raw: &w.Store}
	case "previous_response_id":
		return target{s: &w.PreviousResponseID}
	case "stream":
		return target{raw: &w.Stream}
	}
	return w.nestedMember(key)
}

// otherMember is where a member refused or dropped goes.
func (w *wireRequest) otherMember(key string) *rawValue {
	switch key {
	case "conversation":
		return &w.Conversation
	case "prompt":
		return &w.Prompt
	case "background":
		return &w.Background
	case "max_tool_calls":
		return &w.MaxToolCalls
	case "prompt_cache_key":
		return &w.PromptCacheKey
	case "prompt_cache_retention":
		return &w.PromptCacheRetention
	case "service_tier":
		return &w.ServiceTier
	case "stream_options":
		return &w.StreamOptions
	case "top_logprobs":
		return &w.TopLogprobs
	case "truncation":
		return &w.Truncation
	case "access_programs":
		return &w.AccessPrograms
	case "context_management":
		return &w.ContextManagement
	case "moderation":
		return &w.Moderation
	case "prompt_cache_options":
		return &w.PromptCacheOptions
	}
	return nil
}

// nestedMember is where a container member goes, or any other.
func (w *wireRequest) nestedMember(key string) target {
	switch key {
	case "input":
		return target{input: w}
	case "tools":
		return target{list: (*list[wireTool])(&w.Tools), name: "tools"}
	case "reasoning":
		return target{obj: &w.Reasoning, name: "reasoning"}
	case "text":
		return target{obj: &w.Text, name: "text"}
	case "include":
		return target{strs: &w.Include, name: "include"}
	}
	return target{raw: w.otherMember(key)}
}

// readInput reads input, at o's value, nested depth deep: its span, and
// its items when it is an array, read again from the start when input is
// repeated.
func (w *wireRequest) readInput(o *rawjson.MemberReader, depth int) {
	w.resetItems()
	w.inputBad = mismatch{}
	if rest := o.Rest(); len(rest) > 0 && rest[0] == '[' {
		closeAt(o, readObjects(rest, (*list[wireItem])(&w.items), depth, "input", &w.inputBad))
	} else {
		o.SkipValue()
	}
	if o.Err() == nil {
		w.Input = o.Value() // invalid UTF-8 is replaced where it is read or stored
	}
}

// Reset empties w for reuse (param.Wire), keeping the capacity of its
// slices and dropping every reference into the last input.
func (w *wireRequest) Reset() {
	w.resetItems()
	*w = wireRequest{Tools: emptied(w.Tools), items: w.items, parts: emptied(w.parts), summaries: emptied(w.summaries),
		Include: emptied(w.Include)}
}

// emptied is s emptied, its capacity kept and cleared.
func emptied[T any](s []T) []T {
	clear(s[:cap(s)])
	return s[:0]
}

// resetItems empties w.items, keeping the capacity of each item's summary.
func (w *wireRequest) resetItems() {
	items := w.items[:cap(w.items)]
	for i := range items {
		sum := items[i].Summary[:cap(items[i].Summary)]
		clear(sum)
		items[i] = wireItem{Summary: sum[:0]}
	}
	w.items = items[:0]
}

// wireReasoning is reasoning.
type wireReasoning struct {
	Effort  string
	Summary string
	// GenerateSummary is summary's deprecated name.
	GenerateSummary string
}

func (r *wireReasoning) member(key string) target {
	switch key {
	case "effort":
		return target{s: &r.Effort}
	case "summary":
		return target{s: &r.Summary}
	case "generate_summary":
		return target{s: &r.GenerateSummary}
	}
	return target{}
}

// wireText is text.
type wireText struct {
	Format    wireFormat
	Verbosity rawValue
}

func (t *wireText) member(key string) target {
	switch key {
	case "format":
		return target{obj: &t.Format, name: "text.format"}
	case "verbosity":
		return target{raw: &t.Verbosity}
	}
	return target{}
}

// wireItem is one element of input: a message (with or without "type"),
// a function call or its output, or a reasoning item; what the other
// item types hold is not read.
type wireItem struct {
	Type             string
	Role             string
	Content          rawValue
	CallID           string
	Name             string
	Arguments        string
	Output           rawValue
	Summary          []wireSummary
	EncryptedContent string
}

func (it *wireItem) member(key string) target {
	switch key {
	case "type":
		return target{s: &it.Type}
	case "role":
		return target{s: &it.Role}
	case "content":
		return target{raw: &it.Content}
	case "call_id":
		return target{s: &it.CallID}
	case "name":
		return target{s: &it.Name}
	case "arguments":
		return target{s: &it.Arguments}
	case "output":
		return target{raw: &it.Output}
	case "encrypted_content":
		return target{s: &it.EncryptedContent}
	case "summary":
		return target{list: (*list[wireSummary])(&it.Summary), name: "summary"}
	}
	return target{}
}

// wireSummary is a summary_text part of a reasoning item, or a
// reasoning_text part of its content.
type wireSummary struct {
	Type string
	Text string
}

func (p *wireSummary) member(key string) target {
	switch key {
	case "type":
		return target{s: &p.Type}
	case "text":
		return target{s: &p.Text}
	}
	return target{}
}

// wirePart is one element of a message's content, or of a function call
// output given as parts.
type wirePart struct {
	Type     string
	Text     string
	Refusal  string
	ImageURL string
	Detail   string
	FileID   string
	FileData string
	FileURL  string
	Filename string
}

func (p *wirePart) member(key string) target {
	switch key {
	case "type":
		return target{s: &p.Type}
	case "text":
		return target{s: &p.Text}
	case "refusal":
		return target{s: &p.Refusal}
	case "image_url":
		return target{s: &p.ImageURL}
	case "detail":
		return target{s: &p.Detail}
	case "file_id":
		return target{s: &p.FileID}
	case "file_data":
		return target{s: &p.FileData}
	case "file_url":
		return target{s: &p.FileURL}
	case "filename":
		return target{s: &p.Filename}
	}
	return target{}
}

// wireTool is an element of tools: a function, or a built-in tool the
// gateway refuses by its type.
type wireTool struct {
	Type        string
	Name        string
	Description string
	Parameters  rawValue
	Strict      rawValue
}

func (t *wireTool) member(key string) target {
	switch key {
	case "type":
		return target{s: &t.Type}
	case "name":
		return target{s: &t.Name}
	case "description":
		return target{s: &t.Description}
	case "parameters":
		return target{raw: &t.Parameters}
	case "strict":
		return target{raw: &t.Strict}
	}
	return target{}
}

// wireFormat is text.format.
type wireFormat struct {
	Type        string
	Name        string
	Description string
	Schema      rawValue
	Strict      rawValue
}

func (f *wireFormat) member(key string) target {
	switch key {
	case "type":
		return target{s: &f.Type}
	case "name":
		return target{s: &f.Name}
	case "description":
		return target{s: &f.Description}
	case "schema":
		return target{raw: &f.Schema}
	case "strict":
		return target{raw: &f.Strict}
	}
	return target{}
}

// wireToolChoice is the object form of tool_choice.
type wireToolChoice struct {
	Type string
	Name string
	Mode string
}

func (c *wireToolChoice) member(key string) target {
	switch key {
	case "type":
		return target{s: &c.Type}
	case "name":
		return target{s: &c.Name}
	case "mode":
		return target{s: &c.Mode}
	}
	return target{}
}

// list is a slice of wire structs as an objectList.
type list[T any] []T

func (l *list[T]) reset() { *l = (*l)[:0] }

func (l *list[T]) at(i int) fields { return any(grow((*[]T)(l), i)).(fields) }

var requestPool = sync.Pool{New: func() any { return new(wireRequest) }}
