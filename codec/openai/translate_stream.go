package openai

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

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
//
// Encoding (canonical events → chunks for an OpenAI client): the first
// chunk has role "assistant"; text and thinking deltas are content and
// reasoning_content deltas; a tool-call block is a tool_calls delta with its
// index, id, type and name, then arguments deltas; a redacted thinking block
// is a delta {"thinking_blocks":[{"type":"redacted_thinking","data":…}]}
// when it starts; a thinking block with a signature is followed, when it
// closes, by a delta {"thinking_blocks":[{"type":"thinking","thinking":"",
// "signature":…}]} (the client has the text from reasoning_content and
// sends back thinking_blocks with that text and this signature; see
// DecodeRequest). Finish is a chunk with an empty delta and the
// finish_reason; Usage the usage-only chunk ("choices":[]) when the client
// asked for it; End "data: [DONE]". An Error is "data: {"error":{…}}" and
// ends the stream without [DONE]. Chunk ids, created and model come from
// StreamInfo.

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
		fastCalls: d.fastCalls[:0]}
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
	if w.Usage != nil {
		v.hasUsage, v.usage = true, w.Usage.canonical()
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

// The fast path. Most events of a stream are text deltas of one shape;
// fastChunk reads those (and role, reasoning and finish chunks, and tool call
// fragments that carry only arguments) with a hand-written scanner that
// allocates nothing, and declines everything else (a call's first fragment,
// usage, errors, escaped keys, several choices, unknown nested values,
// duplicate keys, anything malformed) to the sonic path. When it
// accepts a chunk, its view equals the sonic path's (a differential test and
// a fuzz target check this).
//
// The chunks of one stream repeat the same bytes up to the delta
// (`{"id":…,"object":…,"created":…,"model":…,…,"choices":[{"index":0,"delta":`).
// After a chunk is read in full, the scanner's state where the delta starts
// is kept with a copy of those bytes; a next chunk that starts with the same
// bytes is read from the delta on. The scanner is deterministic, so the
// result is what a full read gives.

// Bits for duplicate-key detection, one per known key of each object.
const (
	seenID = 1 << iota
	seenModel
	seenChoices
	seenUsage
	seenError
	seenIndex
	seenDelta
	seenFinish
	seenRole
	seenContent
	seenRefusal
	seenReasoningContent
	seenReasoning
	seenToolCalls
	seenFunctionCall
	seenThinkingBlocks
	seenFunction
	seenArguments
)

// The objects of a chunk, for member dispatch.
const (
	levelTop = iota
	levelChoice
	levelDelta
	levelToolCall // an element of delta.tool_calls
	levelFunction // its function
)

// fastScan is a cursor over one chunk.
type fastScan struct {
	b     []byte
	i     int
	buf   []byte // unescaped strings
	v     *chunkView
	calls *[]wireToolCall // the decoder's storage for a tool call fragment
	seen  int             // keys seen in the current object
	// reasoningContent and reasoning of the delta, merged at its end.
	reasoningContent, reasoning string
	// Where the delta value starts, and the state there: cut is 0 when the
	// prefix cannot be reused (a string in it was unescaped, or it set
	// more than id and model).
	cut                 int
	cutTop, cutChoice   int
	idAt, modelAt       [2]int
	idEscaped, modelEsc bool
}

// prefixState is the scanner state kept from the last chunk read in full.
type prefixState struct {
	prefix        []byte // the chunk's bytes before its delta
	top, choice   int    // seen bits of the top-level and choice objects there
	idAt, modelAt [2]int // spans of id and model in the prefix, {-1, -1} if absent
}

func (d *StreamDecoder) fastChunk(data []byte, v *chunkView) bool {
	s := fastScan{b: data, buf: d.buf, v: v, calls: &d.fastCalls}
	if p := &d.prefix; len(p.prefix) > 0 && bytes.HasPrefix(data, p.prefix) {
		ok := s.resume(p)
		d.buf = s.buf
		if ok {
			return true
		}
		*v = chunkView{}
		s = fastScan{b: data, buf: d.buf, v: v, calls: &d.fastCalls}
	}
	s.idAt, s.modelAt = [2]int{-1, -1}, [2]int{-1, -1}
	ok := s.chunk()
	d.buf = s.buf
	if ok {
		d.keepPrefix(&s)
	}
	return ok
}

// keepPrefix keeps the state of a chunk read in full at its delta, when it
// can be reused.
func (d *StreamDecoder) keepPrefix(s *fastScan) {
	p := &d.prefix
	if s.cut == 0 || s.cutTop&^(seenID|seenModel|seenChoices) != 0 || s.cutChoice&^(seenIndex|seenDelta) != 0 ||
		s.cutTop&seenID != 0 && s.idEscaped || s.cutTop&seenModel != 0 && s.modelEsc {
		p.prefix = p.prefix[:0]
		return
	}
	p.prefix = append(p.prefix[:0], s.b[:s.cut]...)
	p.top, p.choice, p.idAt, p.modelAt = s.cutTop, s.cutChoice, s.idAt, s.modelAt
	// An id or model after the choices is read again from each chunk.
	if s.cutTop&seenID == 0 {
		p.idAt = [2]int{-1, -1}
	}
	if s.cutTop&seenModel == 0 {
		p.modelAt = [2]int{-1, -1}
	}
}

// resume reads a chunk whose bytes up to its delta are p.prefix.
func (s *fastScan) resume(p *prefixState) bool {
	v := s.v
	if p.idAt[0] >= 0 {
		v.id = rawjson.UnsafeString(s.b[p.idAt[0]:p.idAt[1]])
	}
	if p.modelAt[0] >= 0 {
		v.model = rawjson.UnsafeString(s.b[p.modelAt[0]:p.modelAt[1]])
	}
	v.hasChoice = true
	s.i, s.seen = len(p.prefix), p.choice
	if !s.delta() || !s.rest(levelChoice) {
		return false
	}
	s.ws()
	if !s.eat(']') {
		return false
	}
	s.seen = p.top
	if !s.rest(levelTop) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *fastScan) ws() {
	for s.i < len(s.b) {
		// Compact JSON has no whitespace: one comparison settles it.
		if c := s.b[s.i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		s.i++
	}
}

func (s *fastScan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *fastScan) lit(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// object reads an object of the given level; member reads each value.
func (s *fastScan) object(level int) bool {
	s.ws()
	if !s.eat('{') {
		return false
	}
	s.ws()
	if s.eat('}') {
		return true
	}
	return s.members(level)
}

// members reads the members of an object from a key on, to its end.
func (s *fastScan) members(level int) bool {
	for {
		if !s.eat('"') {
			return false
		}
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' {
			if c := s.b[s.i]; c == '\\' || c < 0x20 {
				return false // keys are short and plain: escapes go to sonic
			}
			s.i++
		}
		if s.i == len(s.b) {
			return false
		}
		key := s.b[start:s.i]
		s.i++
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if !s.member(level, key) {
			return false
		}
		s.ws()
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
		s.ws()
	}
}

// rest reads the rest of an object after a member's value.
func (s *fastScan) rest(level int) bool {
	s.ws()
	if s.eat('}') {
		return true
	}
	if !s.eat(',') {
		return false
	}
	s.ws()
	return s.members(level)
}

// once marks a key as seen and reports whether it was new.
func (s *fastScan) once(bit int) bool {
	if s.seen&bit != 0 {
		return false
	}
	s.seen |= bit
	return true
}

func (s *fastScan) member(level int, key []byte) bool {
	v := s.v
	switch level {
	case levelTop:
		switch string(key) {
		case "id":
			start := s.i
			if !s.once(seenID) || !s.nullableString(&v.id) {
				return false
			}
			// Unescaping always shortens: a length change means escapes.
			s.idAt, s.idEscaped = [2]int{start + 1, s.i - 1}, s.b[start] != '"' || len(v.id) != s.i-start-2
			return true
		case "model":
			start := s.i
			if !s.once(seenModel) || !s.nullableString(&v.model) {
				return false
			}
			s.modelAt, s.modelEsc = [2]int{start + 1, s.i - 1}, s.b[start] != '"' || len(v.model) != s.i-start-2
			return true
		case "choices":
			return s.once(seenChoices) && s.choices()
		case "usage":
			return s.once(seenUsage) && s.lit("null")
		case "error":
			return s.once(seenError) && s.lit("null")
		case "object", "created", "service_tier", "system_fingerprint", "obfuscation":
			return s.skipScalar()
		}
	case levelChoice:
		switch string(key) {
		case "index":
			return s.once(seenIndex) && s.lit("0") && s.numberEnds()
		case "delta":
			if !s.once(seenDelta) {
				return false
			}
			s.cut, s.cutChoice = s.i, s.seen
			return s.delta()
		case "finish_reason":
			return s.once(seenFinish) && s.nullableString(&v.finish)
		case "logprobs":
			return s.skipScalar()
		}
	case levelToolCall:
		c := &(*s.calls)[0]
		switch string(key) {
		case "index":
			start := s.i
			if !s.once(seenIndex) || !s.number() {
				return false
			}
			c.Index = s.b[start:s.i] // raw, as sonic keeps it
			return true
		case "function":
			if !s.once(seenFunction) {
				return false
			}
			outer := s.seen
			s.seen = 0
			ok := s.object(levelFunction)
			s.seen = outer
			return ok
		case "id", "type":
			return false // a call's first fragment: rare, sonic reads it
		}
	case levelFunction:
		switch string(key) {
		case "arguments":
			return s.once(seenArguments) && s.nullableString(&(*s.calls)[0].Function.Arguments)
		case "name":
			return false
		}
	case levelDelta:
		var role string
		switch string(key) {
		case "role":
			return s.once(seenRole) && s.nullableString(&role)
		case "content":
			return s.once(seenContent) && s.nullableString(&v.content)
		case "refusal":
			return s.once(seenRefusal) && s.nullableString(&v.refusal)
		case "reasoning_content":
			return s.once(seenReasoningContent) && s.nullableString(&s.reasoningContent)
		case "reasoning":
			return s.once(seenReasoning) && s.nullableString(&s.reasoning)
		case "tool_calls":
			return s.once(seenToolCalls) && (s.lit("null") || s.toolCalls())
		case "function_call":
			return s.once(seenFunctionCall) && s.lit("null")
		case "thinking_blocks":
			return s.once(seenThinkingBlocks) && s.lit("null")
		}
	}
	// A key the wire structs do not have: its scalar value is skipped, as
	// sonic (case-sensitive here) skips it.
	return s.skipScalar()
}

func (s *fastScan) chunk() bool {
	s.seen = 0
	if !s.object(levelTop) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *fastScan) choices() bool {
	if s.lit("null") {
		return true
	}
	if !s.eat('[') {
		return false
	}
	s.ws()
	if s.eat(']') {
		return true
	}
	outer := s.seen
	s.cutTop = outer
	s.seen = 0
	s.v.hasChoice = true
	ok := s.object(levelChoice)
	s.seen = outer
	if !ok {
		return false
	}
	s.ws()
	return s.eat(']') // a second choice goes to sonic
}

// numberEnds reports whether a number token ended at the cursor ("0" and
// not "01" or "0.5").
func (s *fastScan) numberEnds() bool {
	if s.i == len(s.b) {
		return true
	}
	switch s.b[s.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// delta reads the delta object (or null). As on the sonic path, the
// reasoning text is reasoning_content, else reasoning.
func (s *fastScan) delta() bool {
	if s.lit("null") {
		return true
	}
	outer := s.seen
	s.seen = 0
	s.reasoningContent, s.reasoning = "", ""
	ok := s.object(levelDelta)
	s.seen = outer
	s.v.reasoning = s.reasoningContent
	if s.v.reasoning == "" {
		s.v.reasoning = s.reasoning
	}
	return ok
}

// toolCalls reads a tool_calls array of one fragment that carries only
// arguments (the bulk of a tool call's stream) into s.calls.
func (s *fastScan) toolCalls() bool {
	if !s.eat('[') {
		return false
	}
	*s.calls = append((*s.calls)[:0], wireToolCall{})
	outer := s.seen
	s.seen = 0
	ok := s.object(levelToolCall)
	s.seen = outer
	if !ok {
		return false
	}
	s.ws()
	if !s.eat(']') { // several calls in one delta go to sonic
		return false
	}
	s.v.toolCalls = *s.calls
	return true
}

func (s *fastScan) nullableString(dst *string) bool {
	if s.lit("null") {
		*dst = ""
		return true
	}
	return s.string(dst)
}

// string reads a string value: a view of the input when it has no
// escapes, else its unescaped copy in s.buf.
func (s *fastScan) string(dst *string) bool {
	if !s.eat('"') {
		return false
	}
	start := s.i
	i := start + specialAt(s.b[start:])
	switch {
	case i == len(s.b):
		return false
	case s.b[i] == '"':
		if !utf8.Valid(s.b[start:i]) {
			return false // sonic replaces invalid UTF-8
		}
		*dst, s.i = rawjson.UnsafeString(s.b[start:i]), i+1
		return true
	case s.b[i] == '\\':
		return s.escaped(dst, start, i)
	}
	return false // a control character
}

// specialAt returns the index of the first quote, backslash or control
// character in b, or len(b). It reads eight bytes at a time: most strings
// of a chunk (ids, text) have none of them until their end.
func specialAt(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, e := w^('"'*ones), w^('\\'*ones) // zero bytes where w has '"' or '\\'
		if ((w-0x20*ones)&^w|(q-ones)&^q|(e-ones)&^e)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(b)
}

// escaped reads the rest of a string that has escapes, from b[i] (a
// backslash); b[start:i] is its plain beginning.
func (s *fastScan) escaped(dst *string, start, i int) bool {
	off := len(s.buf)
	s.buf = rawjson.AppendUTF8(s.buf, s.b[start:i])
	for i < len(s.b) {
		switch c := s.b[i]; {
		case c == '"':
			// Earlier strings of this event stay valid if an append moved
			// the buffer: they keep the old array.
			*dst, s.i = rawjson.UnsafeString(s.buf[off:]), i+1
			return true
		case c == '\\':
			r, n := unescape(s.b[i:])
			if n == 0 {
				return false
			}
			s.buf = utf8.AppendRune(s.buf, r)
			i += n
		case c < 0x20:
			return false
		default:
			j := i + specialAt(s.b[i:])
			s.buf = rawjson.AppendUTF8(s.buf, s.b[i:j])
			i = j
		}
	}
	return false
}

// unescape decodes the escape at the start of b. Lone surrogates are left
// to sonic (n == 0), as are invalid escapes.
func unescape(b []byte) (r rune, n int) {
	r, n, lone := rawjson.DecodeEscape(b)
	if lone {
		return 0, 0
	}
	return r, n
}

// skipScalar skips a string, number, true, false or null; containers are
// declined.
func (s *fastScan) skipScalar() bool {
	if s.i == len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		var ignored string
		return s.string(&ignored)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// number skips a number, checking JSON's grammar.
func (s *fastScan) number() bool {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.eat('.') && s.digits() == 0 {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return s.numberEnds()
}

func (s *fastScan) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// StreamEncoder turns canonical events into an OpenAI client's SSE events
// (chat.completion.chunk). The zero value needs a Reset before use; it
// implements codec.StreamEncoder. It is not safe for concurrent use.
type StreamEncoder struct {
	info codec.StreamInfo
	// head is every chunk's beginning, up to and including `"choices":[`,
	// built once per stream.
	head                    []byte
	started, finished, done bool
	// calls counts the tool calls sent; call is the index of the open one.
	calls, call int
	// sig collects the signature of the open thinking block.
	sig []byte
}

// Reset readies e for a new stream described by info, keeping its buffers.
func (e *StreamEncoder) Reset(info codec.StreamInfo) {
	*e = StreamEncoder{info: info, head: e.head[:0], sig: e.sig[:0]}
}

// AppendStreamError appends err as the error event of an OpenAI stream:
// "data: {"error":{…}}". The stream ends after it, without [DONE].
func AppendStreamError(dst []byte, err *codec.Error) []byte {
	dst = append(dst, "data: "...)
	dst = AppendError(dst, err)
	return append(dst, "\n\n"...)
}

// Encode appends the chunks of ev to dst.
func (e *StreamEncoder) Encode(dst []byte, ev *codec.Event) []byte {
	if e.done {
		return dst
	}
	if !e.started && ev.Kind != codec.EventError {
		dst = e.begin(dst, ev.ID, ev.Model)
		if ev.Kind == codec.EventStart {
			return dst
		}
	}
	switch ev.Kind {
	case codec.EventDelta:
		return e.delta(dst, ev)
	case codec.EventBlockStart:
		return e.blockStart(dst, ev)
	case codec.EventBlockStop:
		if ev.Block == codec.PartThinking && len(e.sig) > 0 {
			dst = e.open(dst)
			dst = append(dst, `"thinking_blocks":[`...)
			dst = appendThinkingBlock(dst, codec.PartThinking, "", codec.TagSignature(rawjson.UnsafeString(e.sig), e.info.Origin, codec.DialectOpenAI), "")
			dst = append(dst, ']')
			dst = e.close(dst)
			e.sig = e.sig[:0]
		}
	case codec.EventFinish:
		dst = e.finish(dst, finishReason(ev.Stop, e.calls > 0))
	case codec.EventUsage:
		if e.info.IncludeUsage {
			dst = append(dst, e.head[:len(e.head)-1]...) // without the '['
			dst = append(dst, `[],"usage":`...)
			dst = AppendUsage(dst, ev.Usage)
			dst = append(dst, "}\n\n"...)
		}
	case codec.EventError:
		e.done = true
		err := codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "the upstream stream failed"}
		if ev.Err != nil {
			err = *ev.Err
		}
		// The encoder serves clients of another dialect than the upstream's
		// (same-style streams are relayed as they are): the upstream's own
		// type string means nothing here, the kind names the error.
		err.Type = ""
		return AppendStreamError(dst, &err)
	}
	return dst
}

// End appends what closes the stream: a finish chunk if there was none,
// then "data: [DONE]". After an error it appends nothing.
func (e *StreamEncoder) End(dst []byte) []byte {
	if e.done {
		return dst
	}
	if !e.started {
		dst = e.begin(dst, "", "")
	}
	if !e.finished {
		dst = e.finish(dst, finishReason(codec.StopEnd, e.calls > 0))
	}
	e.done = true
	return append(dst, "data: [DONE]\n\n"...)
}

// begin builds the chunk head and appends the first chunk, which gives the
// role. The upstream's id and model serve when StreamInfo has none.
func (e *StreamEncoder) begin(dst []byte, id, model string) []byte {
	e.started = true
	e.head = append(e.head[:0], "data: "...)
	e.head = appendHead(e.head, &e.info, id, model, "chat.completion.chunk")
	e.head = append(e.head, `,"choices":[`...)
	dst = e.open(dst)
	dst = append(dst, `"role":"assistant","content":""`...)
	return e.close(dst)
}

// open appends the beginning of a chunk up to the inside of its delta.
func (e *StreamEncoder) open(dst []byte) []byte {
	dst = append(dst, e.head...)
	return append(dst, `{"index":0,"delta":{`...)
}

// close ends a chunk begun by open.
func (e *StreamEncoder) close(dst []byte) []byte {
	return append(dst, "},\"finish_reason\":null}]}\n\n"...)
}

func (e *StreamEncoder) delta(dst []byte, ev *codec.Event) []byte {
	switch ev.Block {
	case codec.PartText:
		if ev.Text == "" {
			return dst
		}
		dst = e.open(dst)
		dst = append(dst, `"content":`...)
		dst = rawjson.AppendString(dst, ev.Text)
		return e.close(dst)
	case codec.PartThinking:
		e.sig = append(e.sig, ev.Signature...)
		if ev.Text == "" {
			return dst
		}
		dst = e.open(dst)
		dst = append(dst, `"reasoning_content":`...)
		dst = rawjson.AppendString(dst, ev.Text)
		return e.close(dst)
	case codec.PartToolCall:
		if ev.Arguments == "" {
			return dst
		}
		dst = e.open(dst)
		dst = append(dst, `"tool_calls":[{"index":`...)
		dst = strconv.AppendInt(dst, int64(e.call), 10)
		dst = append(dst, `,"function":{"arguments":`...)
		dst = rawjson.AppendString(dst, ev.Arguments)
		dst = append(dst, "}}]"...)
		return e.close(dst)
	}
	return dst
}

func (e *StreamEncoder) blockStart(dst []byte, ev *codec.Event) []byte {
	switch ev.Block {
	case codec.PartToolCall:
		e.call = e.calls
		e.calls++
		dst = e.open(dst)
		dst = append(dst, `"tool_calls":[{"index":`...)
		dst = strconv.AppendInt(dst, int64(e.call), 10)
		dst = append(dst, `,"id":`...)
		dst = rawjson.AppendString(dst, ev.ID)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = rawjson.AppendString(dst, ev.Name)
		dst = append(dst, `,"arguments":""}}]`...)
		return e.close(dst)
	case codec.PartRedactedThinking:
		dst = e.open(dst)
		dst = append(dst, `"thinking_blocks":[`...)
		dst = appendThinkingBlock(dst, codec.PartRedactedThinking, "", "", ev.Data)
		dst = append(dst, ']')
		return e.close(dst)
	case codec.PartThinking:
		e.sig = e.sig[:0]
	}
	return dst
}

func (e *StreamEncoder) finish(dst []byte, reason string) []byte {
	e.finished = true
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":0,"delta":{},"finish_reason":"`...)
	dst = append(dst, reason...)
	return append(dst, "\"}]}\n\n"...)
}

// Interface guards.
var (
	_ codec.StreamDecoder = (*StreamDecoder)(nil)
	_ codec.StreamEncoder = (*StreamEncoder)(nil)
)
