package anthropic

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// An Anthropic stream (https://platform.claude.com/docs/en/build-with-claude/streaming):
//
//	message_start                  the Message, empty content, usage with input_tokens
//	content_block_start            per block, index 0, 1, 2… in order
//	content_block_delta*           text_delta, thinking_delta, signature_delta,
//	                               input_json_delta, citations_delta
//	content_block_stop
//	message_delta                  stop_reason, stop_sequence, cumulative usage
//	message_stop
//
// with ping events anywhere and an error event that ends a failed stream.
// Every event is named after its data's type. Block starts come in index
// order, but deltas and stops of blocks still open may interleave.

var (
	_ codec.StreamDecoder = (*StreamDecoder)(nil)
	_ codec.StreamEncoder = (*StreamEncoder)(nil)
)

// StreamDecoder turns an Anthropic upstream's SSE events into canonical
// events. The zero value is ready; Reset readies it for another stream.
// Strings of the events it returns point into the data it was given, or into
// its own buffer until the next call: a caller that keeps them copies them.
type StreamDecoder struct {
	ev      wireEvent
	json    jsonDecoder
	blocks  []decBlock // by upstream index
	next    int        // the next canonical index
	usage   usageTotals
	scratch []byte // unescaped delta strings

	finished bool // a Finish was emitted
	failed   bool // an error event arrived: the stream is over
}

// decBlock is an upstream content block.
type decBlock struct {
	canon int // canonical index; -1 for a block type with no canonical kind
	kind  codec.PartKind
	open  bool
}

// Reset readies d for a new stream.
func (d *StreamDecoder) Reset() {
	d.ev.reset()
	*d = StreamDecoder{ev: d.ev, json: d.json, blocks: d.blocks[:0], scratch: d.scratch[:0]}
}

// Decode appends the canonical events of one SSE event. Unknown event types
// are ignored, as Anthropic's versioning policy asks of clients.
func (d *StreamDecoder) Decode(dst []codec.Event, event, data []byte) ([]codec.Event, error) {
	if d.failed {
		return dst, nil
	}
	name := event
	if len(name) == 0 {
		name = dataType(data)
	}
	switch string(name) {
	case "content_block_delta":
		return d.delta(dst, data)
	case "message_start", "content_block_start", "content_block_stop", "message_delta", "error":
		return d.decodeOther(dst, data)
	}
	return dst, nil // ping, message_stop and event types added later
}

// dataType reads the type member of an event's data, for streams whose
// events have no SSE name.
func dataType(data []byte) []byte {
	f := [...]rawjson.Field{{Key: "type"}}
	if rawjson.Lookup(data, f[:], false) != nil || f[0].Start < 0 {
		return nil
	}
	s, _ := rawjson.StringBytes(data[f[0].Start:f[0].End])
	return s
}

// deltaKinds are the delta types a content_block_delta carries, with the
// JSON text that follows the type up to the opening quote of the value.
var deltaKinds = [...]struct{ typ, rest string }{
	{"text_delta", `text_delta","text":`},
	{"thinking_delta", `thinking_delta","thinking":`},
	{"input_json_delta", `input_json_delta","partial_json":`},
	{"signature_delta", `signature_delta","signature":`},
}

const deltaPrefix = `{"type":"content_block_delta","index":`

// delta decodes a content_block_delta by hand: it is most of a stream, and
// sonic would cost more than the whole budget of an event. The shape the API
// sends, {"type":"content_block_delta","index":N,"delta":{"type":T,F:"…"}}
// (closing braces possibly padded with spaces), is read in one pass; any
// other spelling goes to deltaGeneral, which gives the same result.
func (d *StreamDecoder) delta(dst []codec.Event, data []byte) ([]codec.Event, error) {
	rest, ok := bytes.CutPrefix(data, []byte(deltaPrefix))
	if !ok {
		return d.deltaGeneral(dst, data)
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' && n < 9 {
		n++
	}
	idx, _ := strconv.Atoi(rawjson.UnsafeString(rest[:n]))
	rest, ok = bytes.CutPrefix(rest[n:], []byte(`,"delta":{"type":"`))
	if n == 0 || n > 1 && data[len(deltaPrefix)] == '0' || !ok {
		return d.deltaGeneral(dst, data)
	}
	kind := -1
	for k := range deltaKinds {
		if r, ok := bytes.CutPrefix(rest, []byte(deltaKinds[k].rest)); ok {
			kind, rest = k, r
			break
		}
	}
	end := rawjson.StringEnd(rest, 0)
	if kind < 0 || end < 0 || !closesTwice(rest[end:]) {
		return d.deltaGeneral(dst, data)
	}
	return d.emitDelta(dst, idx, deltaKinds[kind].typ, rest[:end])
}

// closesTwice reports whether b is two closing braces, with optional
// whitespace around them.
func closesTwice(b []byte) bool {
	for range 2 {
		b = bytes.TrimLeft(b, " \t\r\n")
		if len(b) == 0 || b[0] != '}' {
			return false
		}
		b = b[1:]
	}
	return len(bytes.TrimLeft(b, " \t\r\n")) == 0
}

// deltaGeneral decodes a content_block_delta of any spelling.
func (d *StreamDecoder) deltaGeneral(dst []codec.Event, data []byte) ([]codec.Event, error) {
	f := [...]rawjson.Field{{Key: "index"}, {Key: "delta"}}
	if err := rawjson.Lookup(data, f[:], false); err != nil {
		return dst, fmt.Errorf("anthropic: content_block_delta: %w", err)
	}
	if f[0].Start < 0 || f[1].Start < 0 {
		return dst, fmt.Errorf("anthropic: content_block_delta without index or delta")
	}
	idx, ok := parseInt(data[f[0].Start:f[0].End])
	if !ok {
		return dst, fmt.Errorf("anthropic: content_block_delta: bad index")
	}
	delta := data[f[1].Start:f[1].End]
	g := [...]rawjson.Field{{Key: "type"}, {Key: "text"}, {Key: "thinking"}, {Key: "partial_json"}, {Key: "signature"}}
	if err := rawjson.Lookup(delta, g[:], false); err != nil {
		return dst, fmt.Errorf("anthropic: content_block_delta: %w", err)
	}
	typ, _ := rawjson.StringBytes(span(delta, g[0]))
	for k, dk := range deltaKinds {
		if string(typ) == dk.typ {
			return d.emitDelta(dst, idx, dk.typ, span(delta, g[k+1]))
		}
	}
	// citations_delta and later kinds carry nothing canonical, but the
	// block must exist.
	_, err := d.block(idx, "content_block_delta")
	return dst, err
}

// emitDelta appends the delta event of the given type with the JSON string
// value v, for the upstream block idx.
func (d *StreamDecoder) emitDelta(dst []codec.Event, idx int, typ string, v []byte) ([]codec.Event, error) {
	b, err := d.block(idx, "content_block_delta")
	if err != nil || b.canon < 0 || !b.open {
		return dst, err
	}
	s, err := d.unquote(v)
	if err != nil {
		return dst, fmt.Errorf("anthropic: %s: %w", typ, err)
	}
	if s == "" {
		return dst, nil // the first input_json_delta is often empty
	}
	ev := codec.Event{Kind: codec.EventDelta, Index: b.canon, Block: b.kind}
	switch typ {
	case "input_json_delta":
		ev.Arguments = s
	case "signature_delta":
		ev.Signature = s
	default:
		ev.Text = s
	}
	return append(dst, ev), nil
}

func span(b []byte, f rawjson.Field) []byte {
	if f.Start < 0 {
		return nil
	}
	return b[f.Start:f.End]
}

// unquote returns a JSON string value's contents: a view of v without
// escapes, else a view of d.scratch, valid until the next call.
func (d *StreamDecoder) unquote(v []byte) (string, error) {
	if s, ok := rawjson.StringBytes(v); ok {
		return rawjson.UnsafeString(s), nil
	}
	if rawjson.KindOf(v) != rawjson.KindString {
		return "", errNotString
	}
	var err error
	d.scratch, err = rawjson.AppendUnquote(d.scratch[:0], v)
	return rawjson.UnsafeString(d.scratch), err
}

// block returns the upstream block at idx.
func (d *StreamDecoder) block(idx int, event string) (*decBlock, error) {
	if idx < 0 || idx >= len(d.blocks) {
		return nil, fmt.Errorf("anthropic: %s for block %d, which never started", event, idx)
	}
	return &d.blocks[idx], nil
}

// decodeOther decodes the events that are rare in a stream with sonic.
func (d *StreamDecoder) decodeOther(dst []codec.Event, data []byte) ([]codec.Event, error) {
	ev := &d.ev
	ev.reset()
	if err := d.json.decode(data, ev); err != nil {
		return dst, fmt.Errorf("anthropic: cannot decode stream event: %w", err)
	}
	switch ev.Type {
	case "message_start":
		d.usage = usageTotals{}
		d.usage.apply(&ev.Message.Usage)
		return append(dst, codec.Event{Kind: codec.EventStart, ID: ev.Message.ID, Model: ev.Message.Model,
			Usage: d.usage.canonical()}), nil
	case "content_block_start":
		return d.blockStart(dst)
	case "content_block_stop":
		b, err := d.block(ev.Index, ev.Type)
		if err != nil || b.canon < 0 || !b.open {
			return dst, err
		}
		b.open = false
		return append(dst, codec.Event{Kind: codec.EventBlockStop, Index: b.canon, Block: b.kind}), nil
	case "message_delta":
		d.usage.apply(&ev.Usage)
		if ev.Delta.StopReason != "" && !d.finished {
			d.finished = true
			dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: ParseStopReason(ev.Delta.StopReason),
				StopSequence: ev.Delta.StopSequence})
		}
		return append(dst, codec.Event{Kind: codec.EventUsage, Usage: d.usage.canonical()}), nil
	case "error":
		d.failed = true
		return append(dst, codec.Event{Kind: codec.EventError, Err: &codec.Error{
			Status:  statusForType(ev.Error.Type),
			Kind:    KindForType(ev.Error.Type, statusForType(ev.Error.Type)),
			Message: strings.Clone(ev.Error.Message),
			Type:    strings.Clone(ev.Error.Type),
		}}), nil
	}
	return dst, nil
}

func (d *StreamDecoder) blockStart(dst []codec.Event) ([]codec.Event, error) {
	ev := &d.ev
	if ev.Index != len(d.blocks) {
		return dst, fmt.Errorf("anthropic: content_block_start for block %d, want %d", ev.Index, len(d.blocks))
	}
	cb := &ev.ContentBlock
	b := decBlock{canon: -1, open: true}
	switch cb.Type {
	case "text":
		b.kind = codec.PartText
	case "thinking":
		b.kind = codec.PartThinking
	case "redacted_thinking":
		b.kind = codec.PartRedactedThinking
	case "tool_use":
		b.kind = codec.PartToolCall
	default: // server_tool_use, web_search_tool_result…: no canonical kind
		d.blocks = append(d.blocks, b)
		return dst, nil
	}
	b.canon = d.next
	d.next++
	d.blocks = append(d.blocks, b)
	start := codec.Event{Kind: codec.EventBlockStart, Index: b.canon, Block: b.kind}
	delta := codec.Event{Kind: codec.EventDelta, Index: b.canon, Block: b.kind}
	switch b.kind {
	case codec.PartText:
		delta.Text = cb.Text
	case codec.PartThinking:
		delta.Text, delta.Signature = cb.Thinking, cb.Signature
	case codec.PartRedactedThinking:
		start.Data = cb.Data
	case codec.PartToolCall:
		start.ID, start.Name = cb.ID, cb.Name
		if in := strings.TrimSpace(rawjson.UnsafeString(cb.Input)); in != "" && in != "{}" && in != "null" {
			delta.Arguments = in // input that came whole
		}
	}
	dst = append(dst, start)
	if delta.Text != "" || delta.Signature != "" || delta.Arguments != "" {
		dst = append(dst, delta)
	}
	return dst, nil
}

// End appends what the end of the upstream stream implies: stops for blocks
// still open and, when no message_delta said why the message ended, a
// Finish with StopUnknown and the usage known so far. After an error event
// it appends nothing.
func (d *StreamDecoder) End(dst []codec.Event) []codec.Event {
	if d.failed {
		return dst
	}
	for i := range d.blocks {
		if b := &d.blocks[i]; b.open && b.canon >= 0 {
			b.open = false
			dst = append(dst, codec.Event{Kind: codec.EventBlockStop, Index: b.canon, Block: b.kind})
		}
	}
	if !d.finished {
		d.finished = true
		dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: codec.StopUnknown},
			codec.Event{Kind: codec.EventUsage, Usage: d.usage.canonical()})
	}
	return dst
}

// StreamEncoder turns canonical events into an Anthropic client's SSE
// events, in exactly the API's sequence. Reset it with the exchange's
// StreamInfo before each stream; it is not safe for concurrent use.
//
// What it guarantees a client:
//   - message_start comes first, with input_tokens from the upstream or, when
//     the upstream reports none this early, StreamInfo.InputTokens (coding
//     agents reject a message_start with zero input tokens);
//   - blocks get indexes 0, 1, 2… in the order they start, whatever the
//     canonical indexes;
//   - a thinking block's signature arrives as one signature_delta just before
//     its content_block_stop; a tool call's signature rides in its tool_use id
//     (EncodeToolID), so a tool block's content_block_start waits for its
//     first argument fragment or its stop, in case the signature comes in a
//     delta;
//   - message_delta waits until it has both the stop reason and the final
//     usage (an OpenAI upstream sends usage after finish_reason), or until
//     End; message_stop follows it;
//   - after an error event nothing more is written.
type StreamEncoder struct {
	info    codec.StreamInfo
	started bool // message_start written
	closed  bool // message_stop or error written
	next    int  // the next output block index
	open    []encBlock

	haveStop   bool
	stop       codec.StopReason
	stopSeq    []byte
	startUsage codec.Usage // what message_start said
	usage      codec.Usage
	haveUsage  bool
}

// encBlock is an open block. id, name and sig are copies: a tool block's
// start is written after the event that carried them.
type encBlock struct {
	in      int // canonical index
	out     int // index shown to the client, once started
	kind    codec.PartKind
	started bool
	id      []byte
	name    []byte
	sig     []byte
}

// Reset readies s for a new stream described by info.
func (s *StreamEncoder) Reset(info codec.StreamInfo) {
	open := s.open[:cap(s.open)]
	for i := range open {
		b := &open[i]
		*b = encBlock{id: b.id[:0], name: b.name[:0], sig: b.sig[:0]}
	}
	*s = StreamEncoder{info: info, open: open[:0], stopSeq: s.stopSeq[:0]}
}

const (
	evDelta  = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"
	evStart  = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"
	evStop   = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"
	evEnd    = "}\n\n"
	evDelEnd = "}}\n\n"
)

// Encode appends the SSE events of e, possibly none.
func (s *StreamEncoder) Encode(dst []byte, e *codec.Event) []byte {
	if s.closed {
		return dst
	}
	switch e.Kind {
	case codec.EventDelta:
		// The bulk of a stream: a text delta of the block that is open.
		if n := len(s.open); n > 0 && s.open[n-1].in == e.Index && s.open[n-1].kind == codec.PartText && s.open[n-1].started {
			if e.Text == "" {
				return dst
			}
			return appendTextDelta(dst, s.open[n-1].out, e.Text)
		}
		dst = s.ensureStart(dst)
		return s.delta(dst, e)
	case codec.EventStart:
		return s.start(dst, e)
	case codec.EventBlockStart:
		dst = s.ensureStart(dst)
		if s.find(e.Index) >= 0 {
			return dst // started already
		}
		return s.blockStart(dst, e)
	case codec.EventBlockStop:
		if i := s.find(e.Index); i >= 0 {
			dst = s.stopBlock(dst, i)
		}
		return dst
	case codec.EventFinish:
		dst = s.ensureStart(dst)
		s.haveStop, s.stop = true, e.Stop
		s.stopSeq = append(s.stopSeq[:0], e.StopSequence...)
		return dst // message_delta waits for the usage that follows

	case codec.EventUsage:
		s.usage, s.haveUsage = e.Usage, true
		if s.haveStop {
			return s.finish(dst)
		}
		return dst
	case codec.EventError:
		s.closed = true
		if e.Err == nil {
			return AppendStreamError(dst, &codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "The upstream stream failed."})
		}
		return AppendStreamError(dst, e.Err)
	}
	return dst
}

// End appends what closes the stream: stops for blocks still open, then
// message_delta and message_stop, unless an error or message_stop was
// written already.
func (s *StreamEncoder) End(dst []byte) []byte {
	if s.closed {
		return dst
	}
	dst = s.ensureStart(dst)
	return s.finish(dst)
}

func (s *StreamEncoder) ensureStart(dst []byte) []byte {
	if s.started {
		return dst
	}
	var e codec.Event
	return s.start(dst, &e)
}

func (s *StreamEncoder) start(dst []byte, e *codec.Event) []byte {
	if s.started {
		return dst
	}
	s.started = true
	id, model := messageID(e.ID, s.info), s.info.Model
	if model == "" {
		model = e.Model
	}
	u := e.Usage
	if u.Input <= 0 {
		u.Input, u.CachedInput = s.info.InputTokens, 0
	}
	s.startUsage = u
	dst = append(dst, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = rawjson.AppendString(dst, model)
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	// The API's message_start says output_tokens 1 (or a few) before any
	// output; message_delta carries the real count.
	dst = appendUsage(dst, u, max(u.Output, 1))
	return append(dst, "}}\n\n"...)
}

func (s *StreamEncoder) find(in int) int {
	for i := range s.open {
		if s.open[i].in == in {
			return i
		}
	}
	return -1
}

// add opens a block for canonical index in, reusing the buffers of a block
// closed earlier.
func (s *StreamEncoder) add(in int, kind codec.PartKind) int {
	n := len(s.open)
	if n < cap(s.open) {
		s.open = s.open[:n+1]
		b := &s.open[n]
		*b = encBlock{id: b.id[:0], name: b.name[:0], sig: b.sig[:0]}
	} else {
		s.open = append(s.open, encBlock{})
	}
	b := &s.open[n]
	b.in, b.kind = in, kind
	return n
}

func (s *StreamEncoder) blockStart(dst []byte, e *codec.Event) []byte {
	dst = s.closeContent(dst)
	i := s.add(e.Index, e.Block)
	b := &s.open[i]
	switch e.Block {
	case codec.PartToolCall:
		b.id = append(b.id, e.ID...)
		b.name = append(b.name, e.Name...)
		b.sig = append(b.sig, e.Signature...)
		if e.Arguments != "" {
			dst = s.startTool(dst, i)
			dst = appendArgsDelta(dst, s.open[i].out, e.Arguments)
		}
		return dst
	case codec.PartThinking:
		dst = s.startBlock(dst, b, `{"type":"thinking","thinking":"","signature":""}`)
		b.sig = append(b.sig, e.Signature...)
		if e.Text != "" {
			dst = appendThinkingDelta(dst, b.out, e.Text)
		}
		return dst
	case codec.PartRedactedThinking:
		b.started, b.out = true, s.next
		s.next++
		dst = append(dst, evStart...)
		dst = strconv.AppendInt(dst, int64(b.out), 10)
		dst = append(dst, `,"content_block":{"type":"redacted_thinking","data":`...)
		dst = rawjson.AppendString(dst, e.Data)
		return append(dst, evDelEnd...)
	}
	b.kind = codec.PartText // anything else streams as text
	dst = s.startBlock(dst, b, `{"type":"text","text":""}`)
	if e.Text != "" {
		dst = appendTextDelta(dst, b.out, e.Text)
	}
	return dst
}

// closeContent closes the open text and thinking blocks before another
// block starts: canonical blocks are sequential, and only tool calls
// stream their arguments side by side.
func (s *StreamEncoder) closeContent(dst []byte) []byte {
	for i := 0; i < len(s.open); {
		if s.open[i].kind == codec.PartToolCall {
			i++
			continue
		}
		dst = s.stopBlock(dst, i)
	}
	return dst
}

// startBlock writes a content_block_start with the given block.
func (s *StreamEncoder) startBlock(dst []byte, b *encBlock, block string) []byte {
	b.started, b.out = true, s.next
	s.next++
	dst = append(dst, evStart...)
	dst = strconv.AppendInt(dst, int64(b.out), 10)
	dst = append(dst, `,"content_block":`...)
	dst = append(dst, block...)
	return append(dst, evEnd...)
}

// startTool writes the content_block_start of the tool block at i, once.
// Tool blocks opened before it and not started yet start first, so that
// the client sees the calls in the upstream's order.
func (s *StreamEncoder) startTool(dst []byte, i int) []byte {
	for j := 0; j <= i; j++ {
		b := &s.open[j]
		if b.started || b.kind != codec.PartToolCall {
			continue
		}
		b.started, b.out = true, s.next
		s.next++
		dst = append(dst, evStart...)
		dst = strconv.AppendInt(dst, int64(b.out), 10)
		dst = append(dst, `,"content_block":{"type":"tool_use","id":`...)
		dst = appendClientToolID(dst, rawjson.UnsafeString(b.id), rawjson.UnsafeString(b.sig))
		dst = append(dst, `,"name":`...)
		dst = rawjson.AppendString(dst, rawjson.UnsafeString(b.name))
		dst = append(dst, `,"input":{}}`...)
		dst = append(dst, evEnd...)
	}
	return dst
}

func (s *StreamEncoder) delta(dst []byte, e *codec.Event) []byte {
	i := s.find(e.Index)
	if i < 0 {
		// A delta with no block start: open the block it implies.
		start := *e
		start.Kind, start.Text, start.Arguments, start.Signature = codec.EventBlockStart, "", "", ""
		dst = s.blockStart(dst, &start)
		i = s.find(e.Index)
	}
	b := &s.open[i]
	switch b.kind {
	case codec.PartToolCall:
		if !b.started {
			if len(b.id) == 0 {
				b.id = append(b.id, e.ID...)
			}
			if len(b.name) == 0 {
				b.name = append(b.name, e.Name...)
			}
			b.sig = append(b.sig, e.Signature...)
		}
		if e.Arguments != "" {
			dst = s.startTool(dst, i)
			dst = appendArgsDelta(dst, b.out, e.Arguments)
		}
	case codec.PartThinking:
		if e.Text != "" {
			dst = appendThinkingDelta(dst, b.out, e.Text)
		}
		b.sig = append(b.sig, e.Signature...)
	case codec.PartRedactedThinking:
	default:
		if e.Text != "" {
			dst = appendTextDelta(dst, b.out, e.Text)
		}
	}
	return dst
}

// stopBlock closes the open block at i: a tool block not started yet
// starts now, and a thinking block's signature goes out first.
func (s *StreamEncoder) stopBlock(dst []byte, i int) []byte {
	b := &s.open[i]
	switch b.kind {
	case codec.PartToolCall:
		dst = s.startTool(dst, i)
	case codec.PartThinking:
		if len(b.sig) > 0 {
			dst = append(dst, evDelta...)
			dst = strconv.AppendInt(dst, int64(b.out), 10)
			dst = append(dst, `,"delta":{"type":"signature_delta","signature":`...)
			dst = rawjson.AppendString(dst, codec.TagSignature(rawjson.UnsafeString(b.sig), s.info.Origin, codec.DialectAnthropic))
			dst = append(dst, evDelEnd...)
		}
	}
	dst = append(dst, evStop...)
	dst = strconv.AppendInt(dst, int64(b.out), 10)
	dst = append(dst, evEnd...)
	// Remove the block, keeping its buffers past the end for reuse.
	last := len(s.open) - 1
	closed := s.open[i]
	copy(s.open[i:], s.open[i+1:])
	s.open[last] = closed
	s.open = s.open[:last]
	return dst
}

// finish closes the open blocks and writes message_delta and message_stop.
func (s *StreamEncoder) finish(dst []byte) []byte {
	for len(s.open) > 0 {
		dst = s.stopBlock(dst, 0)
	}
	u := s.startUsage
	if s.haveUsage {
		u = s.usage
		if u.Input <= 0 { // the upstream's final usage does not say
			u.Input, u.CachedInput = s.startUsage.Input, s.startUsage.CachedInput
		}
	}
	dst = append(dst, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""...)
	dst = append(dst, StopReasonString(s.stop)...)
	dst = append(dst, `","stop_sequence":`...)
	dst = rawjson.AppendStringOrNull(dst, rawjson.UnsafeString(s.stopSeq))
	dst = append(dst, `},"usage":`...)
	dst = appendUsage(dst, u, u.Output)
	dst = append(dst, "}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	s.closed = true
	return dst
}

func appendTextDelta(dst []byte, out int, text string) []byte {
	dst = append(dst, evDelta...)
	dst = strconv.AppendInt(dst, int64(out), 10)
	dst = append(dst, `,"delta":{"type":"text_delta","text":`...)
	dst = rawjson.AppendString(dst, text)
	return append(dst, evDelEnd...)
}

func appendThinkingDelta(dst []byte, out int, text string) []byte {
	dst = append(dst, evDelta...)
	dst = strconv.AppendInt(dst, int64(out), 10)
	dst = append(dst, `,"delta":{"type":"thinking_delta","thinking":`...)
	dst = rawjson.AppendString(dst, text)
	return append(dst, evDelEnd...)
}

func appendArgsDelta(dst []byte, out int, args string) []byte {
	dst = append(dst, evDelta...)
	dst = strconv.AppendInt(dst, int64(out), 10)
	dst = append(dst, `,"delta":{"type":"input_json_delta","partial_json":`...)
	dst = rawjson.AppendString(dst, args)
	return append(dst, evDelEnd...)
}
