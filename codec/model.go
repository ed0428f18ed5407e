package codec

// The canonical model: what a request, a response and a stream mean,
// independent of how any provider spells them. Each dialect decodes its wire
// format into these types and encodes them back, so three styles need six
// converters, not nine pairwise translators.
//
// Strings may point into the buffer they were decoded from: a value is valid
// only as long as that buffer is, and must be Reset before reuse.

// Role is who speaks a turn. System prompts are not turns: they live in
// Request.System, as Anthropic and Gemini have them.
type Role uint8

// The roles of a turn.
const (
	RoleUser Role = iota
	RoleAssistant
)

func (r Role) String() string {
	if r == RoleAssistant {
		return "assistant"
	}
	return "user"
}

// PartKind is the kind of one piece of content.
type PartKind uint8

// The kinds of content.
const (
	PartText             PartKind = iota // Text
	PartImage                            // MediaType with Data (base64) or URL
	PartDocument                         // MediaType (application/pdf, text/plain) with Data or URL; Title
	PartToolCall                         // ID, Name, Arguments (a JSON object, as text); Signature (Gemini)
	PartToolResult                       // ID of the call, Name of the tool, Content; IsError
	PartThinking                         // Text, Signature
	PartRedactedThinking                 // Data: opaque, passed back unchanged
)

var partKindNames = [...]string{"text", "image", "document", "tool_call", "tool_result", "thinking", "redacted_thinking"}

func (k PartKind) String() string {
	if int(k) < len(partKindNames) {
		return partKindNames[k]
	}
	return "unknown"
}

// Part is one piece of a turn's content. Which fields are set depends on
// Kind (see the constants); the others are empty.
type Part struct {
	Kind PartKind

	Text string // text, thinking

	MediaType string // image, document
	Data      string // base64 image or document; redacted thinking's opaque data
	URL       string // image or document by reference (http(s) or a provider file URI)
	Title     string // document

	ID        string // tool call id; for a tool result, the id of the call it answers
	Name      string // tool name, on calls and on results (Gemini pairs them by name)
	Arguments string // tool call arguments: a JSON object as text ("{}" when none)
	Content   []Part // tool result content: text and images
	IsError   bool   // tool result reports a failure

	// Signature is the provider's opaque proof of a thinking block
	// (Anthropic "signature") or of a part (Gemini "thoughtSignature"). It
	// must come back unchanged in the next turn, so it is carried through
	// every dialect, hidden in a field the client returns untouched where the
	// dialect has no place for it.
	Signature string
	// SigOrigin is the style whose provider minted Signature, when known
	// (request decoders set it; see SplitSignature).
	SigOrigin string

	// CacheControl marks an Anthropic prompt-cache breakpoint ("ephemeral"),
	// with an optional TTL such as "1h".
	CacheControl string
	CacheTTL     string
}

// Message is one turn of the conversation.
type Message struct {
	Role  Role
	Parts []Part
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, as JSON text ("" for
	// none). Dialects that accept only a subset of JSON Schema convert it.
	Parameters   string
	Strict       bool
	CacheControl string
}

// ToolChoiceMode says whether and how the model must call tools.
type ToolChoiceMode uint8

// The tool choice modes.
const (
	ToolAuto     ToolChoiceMode = iota // the model decides (the default)
	ToolNone                           // no tool calls
	ToolRequired                       // at least one tool call, any tool
	ToolSpecific                       // a call of ToolChoice.Name
)

// ToolChoice constrains tool calling.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string // with ToolSpecific
	// DisableParallel asks for at most one tool call per turn.
	DisableParallel bool
}

// FormatKind is the kind of output format requested.
type FormatKind uint8

// The output formats.
const (
	FormatText       FormatKind = iota
	FormatJSON                  // any JSON object
	FormatJSONSchema            // JSON matching ResponseFormat.Schema
)

// ResponseFormat constrains the output.
type ResponseFormat struct {
	Kind   FormatKind
	Name   string // schema name (OpenAI requires one)
	Schema string // JSON Schema as JSON text
	Strict bool
}

// Thinking configures reasoning ("extended thinking").
type Thinking struct {
	// Enabled asks for reasoning; Budget is its token budget when the
	// dialect has one (Anthropic budget_tokens, Gemini thinkingBudget;
	// 0: the provider's default), Effort the level when it has levels
	// (OpenAI reasoning_effort: "minimal", "low", "medium", "high").
	Enabled bool
	Budget  int
	Effort  string
	// Show asks for the reasoning text in the answer (Gemini includeThoughts).
	Show bool
}

// Request is a generation request.
type Request struct {
	Model    string
	System   []Part // system prompt: text parts
	Messages []Message
	Tools    []Tool
	Choice   ToolChoice

	MaxTokens   int      // 0: not set
	Temperature *float64 // nil: not set
	TopP        *float64
	TopK        *int
	Stop        []string
	Seed        *int64
	Format      ResponseFormat
	Thinking    Thinking
	User        string // end-user id for abuse monitoring (OpenAI user, Anthropic metadata.user_id)

	// Rerank is OpRerank's query and documents; nil for the other
	// operations (and left out of their golden dumps).
	Rerank *Rerank `json:",omitempty"`

	Stream bool
	// IncludeUsage: the client asked for usage in the stream (OpenAI);
	// other dialects always report it.
	IncludeUsage bool

	// Embed is what an OpEmbed request asks (left out of the goldens'
	// dumps of other requests).
	Embed Embed `json:",omitzero"`

	// Session is what a client of OpenAI's Responses API asks besides
	// the generation; zero for the other styles.
	Session Session `json:",omitzero"`
}

// Session is the part of a Responses request that the gateway keeps or
// gives back rather than sends upstream: the stored conversation it
// continues, whether to store this turn, and what the response echoes.
// Strings may point into the request body, as the rest of a Request.
type Session struct {
	// PreviousID is the stored response the request continues
	// (previous_response_id). The decoder only reads it: the proxy puts
	// that response's items before the input and decodes again.
	PreviousID string
	// Store: keep the response for later turns (the API's default).
	Store bool
	// Input is the request's input as sent, JSON text: a string or an
	// array of items (with the stored ones first, once resolved).
	Input string
	// Instructions (text), Metadata (a JSON object as text) and
	// ReasoningSummary (auto, concise, detailed) are echoed in the
	// response as they were asked.
	Instructions, Metadata, ReasoningSummary string
}

// Embed is an embeddings request: a vector for each input, in order.
type Embed struct {
	Texts []string
	// Tokens are inputs given as token ids (OpenAI's), which only an
	// OpenAI upstream reads; an embeddings request holds texts or tokens.
	Tokens     [][]int
	Dimensions int // 0: the model's own
	// TaskType and Title are Gemini's hints of what the vectors are for
	// (RETRIEVAL_DOCUMENT and the document's title...); OpenAI has none.
	TaskType, Title string
	// How the client wants its answer, for its own style's encoder
	// (StreamInfo.Embed): the vectors as base64 (OpenAI's
	// encoding_format), one embedding rather than a list (Gemini's
	// embedContent).
	Base64, Single bool
}

// AddMessage appends a message of the given role to r, reusing the part
// slice a reset Request kept in that slot.
func (r *Request) AddMessage(role Role) *Message {
	n := len(r.Messages)
	if n < cap(r.Messages) {
		r.Messages = r.Messages[:n+1]
		m := &r.Messages[n]
		m.Role, m.Parts = role, m.Parts[:0]
		return m
	}
	r.Messages = append(r.Messages, Message{Role: role})
	return &r.Messages[n]
}

// CallName returns the name of the tool call with the given id in the
// assistant turns so far, searching from the end ("" for none): the name a
// tool result is given when its API pairs results with calls by id only.
func (r *Request) CallName(id string) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := &r.Messages[i]
		if m.Role != RoleAssistant {
			continue
		}
		for j := range m.Parts {
			if p := &m.Parts[j]; p.Kind == PartToolCall && p.ID == id {
				return p.Name
			}
		}
	}
	return ""
}

// Reset empties r for reuse, keeping the capacity of its slices.
func (r *Request) Reset() {
	for i := range r.Messages {
		r.Messages[i].Parts = r.Messages[i].Parts[:0]
	}
	*r = Request{System: r.System[:0], Messages: r.Messages[:0], Tools: r.Tools[:0], Stop: r.Stop[:0]}
}

// StopReason is why generation ended.
type StopReason uint8

// The stop reasons. Each dialect maps its own values to these and back.
const (
	StopUnknown       StopReason = iota
	StopEnd                      // natural end (stop, end_turn, STOP)
	StopMaxTokens                // the output token limit (length, max_tokens, MAX_TOKENS)
	StopSequence                 // a stop sequence matched (stop, stop_sequence, STOP)
	StopToolUse                  // the model called tools (tool_calls, tool_use)
	StopContentFilter            // a safety or policy filter (content_filter, refusal, SAFETY…)
	StopPause                    // a long turn paused, to be continued (Anthropic pause_turn)
	StopError                    // the provider gave up (Gemini MALFORMED_FUNCTION_CALL, OTHER…)
)

var stopNames = [...]string{"unknown", "end", "max_tokens", "stop_sequence", "tool_use", "content_filter", "pause", "error"}

func (s StopReason) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return "unknown"
}

// Response is a whole (non-streamed) generation result.
type Response struct {
	ID    string
	Model string
	Parts []Part // the assistant's content, in order
	Stop  StopReason
	// StopSequence is the stop sequence that matched, when the dialect says.
	StopSequence string
	Ranking      *Ranking `json:",omitempty"` // OpRerank's answer; nil for the other operations
	Usage        Usage
	// Vectors answer an OpEmbed request: one per input, in order.
	Vectors [][]float32 `json:",omitempty"`
}

// Reset empties r for reuse.
func (r *Response) Reset() { *r = Response{Parts: r.Parts[:0]} }
