package openai

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// Streams. OpenAI chunks have no block events: the decoder synthesises them.
//
// Decoding (an upstream's chunks → canonical events):
//
//   - the first chunk with a choice or usage gives Start (id, model);
//   - content deltas form a text block, reasoning_content (or reasoning)
//     deltas a thinking block, refusal deltas a text block; a change of
//     kind closes the open block and opens the next;
//   - thinking_blocks deltas (LiteLLM's shape, and what StreamEncoder
//     sends): a thinking entry's signature is a signature Delta that ends
//     the thinking block (Anthropic sends the signature last, and the
//     encoder sends it when the block closes); a redacted_thinking entry is
//     a block of its own;
//   - each tool call index is one tool-call block. OpenAI streams a call's
//     id and name on its first fragment and the arguments after, one call
//     after the other, but parallel calls may interleave. Canonical blocks
//     must not overlap, so one call is "live" (its fragments go out as they
//     come) and fragments of other calls are held back until the live
//     call's arguments form a complete JSON value; then its block closes and
//     the next call's block opens with what was held back. In the usual
//     sequential stream nothing is held back. A text or reasoning delta, a
//     finish_reason or the end closes every call. A fragment for a call
//     whose block was closed (another call had taken over) is an error;
//   - finish_reason gives Finish (StopToolUse when tool calls were seen and
//     the server said "stop"); usage, on its own chunk or on any other, is
//     kept and sent as Usage at [DONE] or at the end, the latest seen;
//   - an {"error":…} event, or an SSE event named "error", gives Error and
//     ends the stream.
//
// Strings in the events point into the data passed to Decode or into the
// decoder's buffers: they are valid until the next call of Decode, End or
// Reset.

// StreamDecoder turns an OpenAI-compatible upstream's SSE events into
// canonical events. The zero value is ready to use; it implements
// codec.StreamDecoder. It is not safe for concurrent use.
type StreamDecoder struct {
	started, finished, done bool
	// hasOpen says whether a block is open: open is its kind, openIdx its
	// index. next is the index of the next block.
	hasOpen bool
	open    codec.PartKind
	openIdx int
	next    int
	// calls are the tool calls of the stream in order of appearance;
	// calls[live] is the one whose block is open, when hasLive.
	calls    []toolCall
	hasLive  bool
	live     int
	sawTools bool
	usage    codec.Usage
	hasUsage bool
	// buf holds the unescaped strings of the current event.
	buf       []byte
	view      chunkView
	wire      wireChunk
	prefix    prefixState
	shape     textShape
	fastCalls []wireToolCall // the fast path's tool call fragment
}

// toolCall is the state of one streamed tool call.
type toolCall struct {
	index    int // OpenAI's index
	id, name string
	state    uint8
	args     []byte // held back while pending
	json     jsonTracker
}

const (
	callPending uint8 = iota
	callLive
	callClosed
)

var errLateFragment = errors.New("openai: a tool call fragment arrived after the call's block was closed")

// jsonTracker follows the nesting of a JSON value given in fragments, to
// tell when it is complete.
type jsonTracker struct {
	depth             int
	opened, inString  bool
	escaped, complete bool
}

func (t *jsonTracker) feed(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if t.inString {
			switch {
			case t.escaped:
				t.escaped = false
			case c == '\\':
				t.escaped = true
			case c == '"':
				t.inString = false
			}
			continue
		}
		switch c {
		case '"':
			t.inString = true
		case '{', '[':
			t.depth++
			t.opened = true
		case '}', ']':
			t.depth--
		}
	}
	t.complete = t.opened && t.depth <= 0 && !t.inString
}

// chunkView is what the decoder reads of one chunk (of its choice 0): the
// fast path fills the common fields, the sonic path all of them.
type chunkView struct {
	id, model                   string
	hasChoice                   bool
	content, reasoning, refusal string
	contentPlain                bool // content needs no escaping (codec.Event.Plain)
	finish                      string
	hasUsage                    bool
	usage                       codec.Usage
	toolCalls                   []wireToolCall
	functionCall                *wireFunctionCall
	thinkingBlocks              []wireThinkingBlock
	err                         rawValue
}

// Reset readies d for a new stream, keeping its buffers.
func (d *StreamDecoder) Reset() {
	calls := d.calls[:cap(d.calls)]
	for i := range calls {
		calls[i] = toolCall{args: calls[i].args[:0]}
	}
	wire := d.wire
	wire.reset()
	*d = StreamDecoder{calls: calls[:0], buf: d.buf[:0], wire: wire, prefix: prefixState{prefix: d.prefix.prefix[:0]},
		shape: textShape{head: d.shape.head[:0], mid: d.shape.mid[:0], tail: d.shape.tail[:0]}, fastCalls: d.fastCalls[:0]}
}

// Decode appends the canonical events of one SSE event to dst.
func (d *StreamDecoder) Decode(dst []codec.Event, event, data []byte) ([]codec.Event, error) {
	if d.done {
		return dst, nil
	}
	d.buf = d.buf[:0]
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return dst, nil
	case string(event) == "error":
		return d.streamError(dst, data), nil
	case sse.IsDone(data):
		return d.end(dst, true), nil
	}
	v := &d.view
	*v = chunkView{}
	if !d.fastChunk(data, v) {
		if err := d.slowChunk(data, v); err != nil {
			return dst, err
		}
	}
	if !isEmptyValue(v.err) {
		return d.streamError(dst, v.err), nil
	}
	return d.chunk(dst, v)
}

// End appends what the end of the upstream's stream implies: open blocks
// close, and a Finish and the Usage the upstream never sent follow. A stream
// that ends without [DONE] and without finish_reason was cut off: its stop
// reason is StopUnknown.
func (d *StreamDecoder) End(dst []codec.Event) []codec.Event {
	if d.done {
		return dst
	}
	return d.end(dst, false)
}

func (d *StreamDecoder) end(dst []codec.Event, clean bool) []codec.Event {
	dst = d.start(dst, "", "")
	dst = d.closeAll(dst)
	if !d.finished {
		stop := codec.StopUnknown
		if clean {
			stop = stopReason("stop", d.sawTools)
		}
		dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: stop})
		d.finished = true
	}
	if d.hasUsage {
		dst = append(dst, codec.Event{Kind: codec.EventUsage, Usage: d.usage})
	}
	d.done = true
	return dst
}

func (d *StreamDecoder) start(dst []codec.Event, id, model string) []codec.Event {
	if d.started {
		return dst
	}
	d.started = true
	return append(dst, codec.Event{Kind: codec.EventStart, ID: id, Model: model})
}

// chunk turns one decoded chunk into events.
func (d *StreamDecoder) chunk(dst []codec.Event, v *chunkView) ([]codec.Event, error) {
	if !v.hasChoice && !v.hasUsage {
		return dst, nil // Azure's prompt filter results, keep-alives: nothing to say
	}
	dst = d.start(dst, v.id, v.model)
	if v.hasUsage {
		d.usage, d.hasUsage = v.usage, true
	}
	if !v.hasChoice || d.finished {
		return dst, nil
	}
	if v.reasoning != "" {
		dst = d.text(dst, codec.PartThinking, v.reasoning)
	}
	for i := range v.thinkingBlocks {
		dst = d.thinkingBlock(dst, &v.thinkingBlocks[i], v.reasoning == "")
	}
	if v.content != "" {
		dst = d.text(dst, codec.PartText, v.content)
		dst[len(dst)-1].Plain = v.contentPlain
	}
	if v.refusal != "" {
		dst = d.text(dst, codec.PartText, v.refusal)
	}
	var err error
	for i := range v.toolCalls {
		tc := &v.toolCalls[i]
		if dst, err = d.toolFragment(dst, d.callIndex(tc), tc.ID, tc.Function.Name, tc.Function.Arguments, v.id); err != nil {
			return dst, err
		}
	}
	if fc := v.functionCall; fc != nil {
		if dst, err = d.toolFragment(dst, 0, "", fc.Name, fc.Arguments, v.id); err != nil {
			return dst, err
		}
	}
	if v.finish != "" {
		dst = d.closeAll(dst)
		dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: stopReason(v.finish, d.sawTools)})
		d.finished = true
	}
	return dst, nil
}

// text appends a text or thinking delta, opening a block of that kind if
// needed.
func (d *StreamDecoder) text(dst []codec.Event, kind codec.PartKind, s string) []codec.Event {
	if !d.hasOpen || d.open != kind {
		dst = d.closeAll(dst)
		dst = d.openBlock(dst, kind, "", "")
	}
	return append(dst, codec.Event{Kind: codec.EventDelta, Index: d.openIdx, Block: kind, Text: s})
}

// thinkingBlock handles one thinking_blocks entry. Its text counts only
// when the delta has no reasoning_content (LiteLLM sends both); its
// signature ends the thinking block.
func (d *StreamDecoder) thinkingBlock(dst []codec.Event, b *wireThinkingBlock, useText bool) []codec.Event {
	switch b.Type {
	case "thinking":
		if useText && b.Thinking != "" {
			dst = d.text(dst, codec.PartThinking, b.Thinking)
		}
		if b.Signature != "" {
			if !d.hasOpen || d.open != codec.PartThinking {
				dst = d.closeAll(dst)
				dst = d.openBlock(dst, codec.PartThinking, "", "")
			}
			dst = append(dst, codec.Event{Kind: codec.EventDelta, Index: d.openIdx, Block: codec.PartThinking, Signature: b.Signature})
			dst = d.closeOpen(dst)
		}
	case "redacted_thinking":
		dst = d.closeAll(dst)
		dst = append(dst, codec.Event{Kind: codec.EventBlockStart, Index: d.next, Block: codec.PartRedactedThinking, Data: b.Data},
			codec.Event{Kind: codec.EventBlockStop, Index: d.next, Block: codec.PartRedactedThinking})
		d.next++
	}
	return dst
}

func (d *StreamDecoder) openBlock(dst []codec.Event, kind codec.PartKind, id, name string) []codec.Event {
	d.hasOpen, d.open, d.openIdx = true, kind, d.next
	d.next++
	return append(dst, codec.Event{Kind: codec.EventBlockStart, Index: d.openIdx, Block: kind, ID: id, Name: name})
}

// closeOpen closes the open block, if any; for a tool call, the live call.
func (d *StreamDecoder) closeOpen(dst []codec.Event) []codec.Event {
	if !d.hasOpen {
		return dst
	}
	d.hasOpen = false
	if d.open == codec.PartToolCall && d.hasLive {
		d.calls[d.live].state = callClosed
		d.hasLive = false
	}
	return append(dst, codec.Event{Kind: codec.EventBlockStop, Index: d.openIdx, Block: d.open})
}

// closeAll closes the open block and gives every held-back tool call its
// block, complete or not.
func (d *StreamDecoder) closeAll(dst []codec.Event) []codec.Event {
	dst = d.closeOpen(dst)
	for i := range d.calls {
		if d.calls[i].state == callPending {
			dst = d.emitCall(dst, i)
			dst = d.closeOpen(dst)
		}
	}
	return dst
}

// callIndex returns the OpenAI index of a tool call fragment. A server that
// leaves the index out sends whole calls: a new id is a new call, no id
// continues the last one.
func (d *StreamDecoder) callIndex(tc *wireToolCall) int {
	if n, ok, err := rawInt(tc.Index, ""); ok && err == nil && n >= 0 && n < 1<<20 {
		return int(n)
	}
	last := -1
	for i := range d.calls {
		if c := &d.calls[i]; tc.ID != "" && c.id == tc.ID {
			return c.index
		}
		last = max(last, d.calls[i].index)
	}
	if tc.ID == "" && last >= 0 {
		return last
	}
	return last + 1
}

// toolFragment handles one fragment of the tool call with the given index.
func (d *StreamDecoder) toolFragment(dst []codec.Event, index int, id, name, args, chunkID string) ([]codec.Event, error) {
	if id == "" && name == "" && args == "" {
		return dst, nil // says nothing (and must not make a call of its own)
	}
	k := -1
	for i := range d.calls {
		if d.calls[i].index == index {
			k = i
			break
		}
	}
	if k < 0 {
		if id == "" {
			id = syntheticCallID(chunkID, index)
		}
		var held []byte // the buffer a reset decoder kept in this slot
		if k = len(d.calls); k < cap(d.calls) {
			held = d.calls[:k+1][k].args[:0]
		}
		d.calls = append(d.calls, toolCall{index: index, id: strings.Clone(id), name: strings.Clone(name), args: held})
	}
	c := &d.calls[k]
	if c.state == callPending && c.name == "" && name != "" {
		c.name = strings.Clone(name)
	}
	switch c.state {
	case callLive:
		if args != "" {
			dst = append(dst, codec.Event{Kind: codec.EventDelta, Index: d.openIdx, Block: codec.PartToolCall, Arguments: args})
			c.json.feed(args)
		}
	case callPending:
		c.args = append(c.args, args...)
		c.json.feed(args)
	case callClosed:
		if strings.TrimSpace(args) != "" {
			return dst, errLateFragment
		}
	}
	return d.advance(dst), nil
}

// advance hands the block over to the held-back calls, in order, once the
// live call's arguments are complete (or there is no live call). A complete
// call stays open while nobody waits: its arguments may still have a
// trailing fragment.
func (d *StreamDecoder) advance(dst []codec.Event) []codec.Event {
	for {
		next := d.nextPending()
		if next < 0 || d.hasLive && !d.calls[d.live].json.complete {
			return dst
		}
		dst = d.emitCall(dst, next) // closes the open block first
	}
}

func (d *StreamDecoder) nextPending() int {
	for i := range d.calls {
		if d.calls[i].state == callPending {
			return i
		}
	}
	return -1
}

// emitCall closes the open block, opens the block of the held-back call
// calls[i] with the arguments held so far, and makes it the live call.
func (d *StreamDecoder) emitCall(dst []codec.Event, i int) []codec.Event {
	dst = d.closeOpen(dst)
	c := &d.calls[i]
	dst = d.openBlock(dst, codec.PartToolCall, c.id, c.name)
	c.state, d.hasLive, d.live, d.sawTools = callLive, true, i, true
	if len(c.args) > 0 {
		dst = append(dst, codec.Event{Kind: codec.EventDelta, Index: d.openIdx, Block: codec.PartToolCall, Arguments: rawjson.UnsafeString(c.args)})
	}
	return dst
}

// syntheticCallID names a tool call that came without an id, uniquely in
// the conversation (the chunk id is unique per completion).
func syntheticCallID(chunkID string, index int) string {
	b := make([]byte, 0, len("call_")+len(chunkID)+8)
	b = append(b, "call_"...)
	for i := 0; i < len(chunkID); i++ {
		if c := chunkID[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' {
			b = append(b, c)
		}
	}
	b = append(b, '_')
	b = strconv.AppendInt(b, int64(index), 10)
	return string(b)
}

// streamError appends the Error of an error event ({"error":{…}}, or the
// data of an SSE event named "error") and ends the stream.
func (d *StreamDecoder) streamError(dst []codec.Event, v []byte) []codec.Event {
	d.done = true
	return append(dst, codec.Event{Kind: codec.EventError, Err: streamErrorValue(v)})
}

// streamErrorValue reads an in-stream error: an error object, a string, a
// document with an "error" member, or any other text.
func streamErrorValue(v []byte) *codec.Error {
	e := &codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "the upstream stream failed"}
	switch rawjson.KindOf(v) {
	case rawjson.KindString:
		if s, err := rawjson.Unquote(v); err == nil && s != "" {
			e.Message = s
		}
		return e
	case rawjson.KindObject:
	default:
		e.Message = string(v)
		return e
	}
	var outer struct {
		Error rawValue `json:"error"`
	}
	if unmarshalString(rawjson.UnsafeString(v), &outer) == nil && !isEmptyValue(outer.Error) {
		return streamErrorValue(outer.Error)
	}
	var w wireStreamError
	if unmarshalString(rawjson.UnsafeString(v), &w) != nil {
		return e
	}
	if w.Message != "" {
		e.Message = strings.Clone(w.Message)
	}
	e.Type, e.Param = strings.Clone(w.Type), rawScalar(w.Param)
	e.Code = rawScalar(w.Code)
	if status := errorStatus(w.Type, e.Code); status != 0 {
		e.Status, e.Kind = status, codec.KindForStatus(status)
	}
	return e
}

// errorStatus guesses the HTTP status of an in-stream error from its type
// or its code (some servers put the status there); 0 for none.
func errorStatus(typ, code string) int {
	if n, err := strconv.Atoi(code); err == nil && 400 <= n && n <= 599 {
		return n
	}
	switch typ {
	case "invalid_request_error":
		return 400
	case "tokens", "requests", "rate_limit_exceeded", "insufficient_quota":
		return 429
	}
	switch code {
	case "rate_limit_exceeded", "insufficient_quota":
		return 429
	}
	return 0
}

// rawScalar renders a string or number member as a string (a copy: errors
// outlive the event).
func rawScalar(v rawValue) string {
	switch rawjson.KindOf(v) {
	case rawjson.KindString:
		s, _ := rawjson.Unquote(v)
		return strings.Clone(s)
	case rawjson.KindNumber:
		return string(v)
	}
	return ""
}

// slowChunk decodes a chunk with sonic.
func (d *StreamDecoder) slowChunk(data []byte, v *chunkView) error {
	w := &d.wire
	w.reset()
	if err := unmarshal(data, w, false); err != nil {
		return errors.New("openai: cannot decode a stream chunk: " + err.Error())
	}
	v.id, v.model, v.err = w.ID, w.Model, w.Error
	if rawjson.KindOf(w.Usage) == rawjson.KindObject {
		u, err := readChunkUsage(w.Usage)
		if err != nil {
			return errors.New("openai: cannot decode a stream chunk: " + err.Error())
		}
		v.hasUsage, v.usage = true, u
	}
	for i := range w.Choices {
		c := &w.Choices[i]
		if c.Index != 0 {
			continue
		}
		dl := &c.Delta
		text, err := replyText(dl.Content)
		if err != nil {
			return err
		}
		v.hasChoice, v.content, v.refusal, v.finish = true, text, dl.Refusal, c.FinishReason
		v.reasoning = dl.ReasoningContent
		if v.reasoning == "" {
			v.reasoning = dl.Reasoning
		}
		v.toolCalls, v.functionCall, v.thinkingBlocks = dl.ToolCalls, dl.FunctionCall, dl.ThinkingBlocks
		break
	}
	return nil
}

// readChunkUsage reads a chunk's usage object as DecodeUsage does (the
// last of a repeated member, and its error alone), with DeepSeek's count
// of cached input when the details hold none.
func readChunkUsage(b []byte) (codec.Usage, error) {
	u, err := DecodeUsage(b)
	if err != nil || u.CachedInput != 0 {
		return u, err
	}
	hit := [...]rawjson.Last{{Key: "prompt_cache_hit_tokens"}}
	if rawjson.LastKeys(b, 0, hit[:]); hit[0].At >= 0 {
		end := rawjson.ValueEnd(b, hit[0].At)
		if u.CachedInput, err = count(b[hit[0].At:end]); err != nil {
			return u, err
		}
	}
	return u, nil
}
