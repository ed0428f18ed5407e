package codec

import "github.com/rosetta-gateway/rosetta/codec/rawjson"

// A stream is a sequence of canonical events. A dialect's StreamDecoder turns
// the upstream's SSE events into them; the client dialect's StreamEncoder
// turns them into its own SSE events. Both are small state machines that
// are reset and reused, never allocated per event.
//
// The canonical sequence of a successful stream is:
//
//	Start
//	(BlockStart Delta* BlockStop)*   blocks in order; Index counts from 0
//	Finish
//	Usage                            the final, cumulative usage
//
// A decoder synthesises what its dialect leaves implicit (OpenAI has no
// block events: the decoder opens and closes blocks as the deltas change
// kind), so that every encoder can rely on this order. Error may come at any
// point and ends the stream.

// EventKind is the kind of a stream event.
type EventKind uint8

// The kinds of stream event.
const (
	EventStart      EventKind = iota // ID, Model; Usage.Input when the upstream reports it this early
	EventBlockStart                  // Index, Block; ID and Name of a tool call; Data of redacted thinking
	EventDelta                       // Index, Block; Text (text, thinking), Arguments (a tool call's JSON fragment), Signature
	EventBlockStop                   // Index, Block
	EventFinish                      // Stop, StopSequence
	EventUsage                       // Usage: cumulative
	EventError                       // Err: the stream failed after it started
)

var eventNames = [...]string{"start", "block_start", "delta", "block_stop", "finish", "usage", "error"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Event is one canonical stream event; see EventKind for the fields each
// kind sets. Strings may point into the decoder's input.
type Event struct {
	Kind  EventKind
	Index int
	Block PartKind // PartText, PartThinking, PartRedactedThinking or PartToolCall
	// Plain: Text needs no JSON escaping, for the decoder checked it (valid
	// UTF-8 without a quote, a backslash or a control character), so an
	// encoder copies it between quotes (AppendText). False says nothing.
	Plain bool `json:"-"`

	ID    string
	Model string
	Name  string

	Text      string
	Arguments string
	Signature string
	Data      string

	Stop         StopReason
	StopSequence string
	Usage        Usage
	Err          *Error
}

// StreamInfo is what an encoder needs to know about the exchange.
type StreamInfo struct {
	// ID names the message when the upstream's id is unusable.
	ID string
	// Model is the model name to show the client (the public name).
	Model string
	// Created is the Unix time of the request, in seconds.
	Created int64
	// IncludeUsage: the client asked for usage (OpenAI stream_options).
	IncludeUsage bool
	// InputTokens estimates the prompt's tokens, for dialects that report
	// them at the start of a stream when the upstream reports them only at
	// its end (Anthropic's message_start must not say 0).
	InputTokens int
	// Origin is the style of the upstream the response came from, whose
	// signatures the encoder tags for a client of another style
	// (TagSignature).
	Origin string
	// Request is the request answered, for an answer that gives some of
	// it back or takes its shape from it: a rerank's documents, which not
	// every upstream returns; how an embeddings client wants its vectors
	// (Embed.Base64, Embed.Single).
	Request *Request
}

// StreamDecoder turns an upstream dialect's SSE events into canonical events.
type StreamDecoder interface {
	// Decode appends the canonical events of one SSE event, given its
	// event name (empty when none) and data, to dst.
	Decode(dst []Event, event, data []byte) ([]Event, error)
	// End appends what the upstream's end of stream implies (blocks still
	// open, a finish the upstream never sent).
	End(dst []Event) []Event
	// Reset readies the decoder for a new stream.
	Reset()
}

// StreamEncoder turns canonical events into a client dialect's SSE events.
type StreamEncoder interface {
	// Encode appends the SSE bytes of e, possibly none (state is kept
	// until later events complete it).
	Encode(dst []byte, e *Event) []byte
	// End appends what closes the stream in this dialect.
	End(dst []byte) []byte
	// Reset readies the encoder for a new stream.
	Reset(info StreamInfo)
}

// AppendText appends e's Text as a JSON string: copied between quotes when
// e.Plain, else escaped (rawjson.AppendString), which would find nothing to
// escape in a plain text but spends a look at each byte finding it.
func AppendText(dst []byte, e *Event) []byte {
	if !e.Plain {
		return rawjson.AppendString(dst, e.Text)
	}
	dst = append(dst, '"')
	dst = append(dst, e.Text...)
	return append(dst, '"')
}

// AppendTextInside appends e's Text as AppendText does, without the
// quotes: for an encoder whose fixed bytes around the text hold them.
func AppendTextInside(dst []byte, e *Event) []byte {
	if e.Plain {
		return append(dst, e.Text...)
	}
	return rawjson.AppendEscaped(dst, e.Text)
}
