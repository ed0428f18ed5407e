package anthropic

import (
	"bytes"
	"fmt"
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
	// The SDKs skip a ping and fail on an error whatever their data; any
	// other event they read by its data's type, whatever its name.
	switch string(event) {
	case "ping":
		return dst, checked(event, data)
	case "error":
		return d.decodeError(dst, data)
	}
	if rest, ok := bytes.CutPrefix(data, []byte(deltaPrefix)); ok {
		return d.delta(dst, data, rest) // the bulk of a stream: its type read in the fast path
	}
	switch typ := dataType(data); string(typ) {
	case "content_block_delta":
		return d.deltaFields(dst, data)
	case "message_start", "content_block_start", "content_block_stop", "message_delta", "error":
		return d.decodeOther(dst, data)
	}
	return dst, checked(event, data) // message_stop and event types added later
}

// checked is the error of an event the decoder does not read: none when
// its data is JSON.
func checked(event, data []byte) error {
	if !codec.Valid(data) {
		return fmt.Errorf("anthropic: a %q event whose data is not JSON", event)
	}
	return nil
}

// dataType reads the type member of an event's data, for streams whose
// events have no SSE name and for an event whose name its data belies: the
// last, as a client's JSON parser reads it.
func dataType(data []byte) []byte {
	f := [...]rawjson.Last{{Key: "type"}}
	if rawjson.LastKeys(data, 0, f[:]) < 0 || f[0].At < 0 {
		return nil
	}
	s, _ := rawjson.StringBytes(data[f[0].At:rawjson.ValueEnd(data, f[0].At)])
	return s
}

// deltaKinds are the delta types a content_block_delta carries, with the
// JSON text that follows the type up to the opening quote of the value.
var deltaKinds = [...]struct{ typ, rest string }{
	kindText:      {"text_delta", `text_delta","text":`},
	kindThinking:  {"thinking_delta", `thinking_delta","thinking":`},
	kindArguments: {"input_json_delta", `input_json_delta","partial_json":`},
	kindSignature: {"signature_delta", `signature_delta","signature":`},
}

// The delta kinds, indexes of deltaKinds.
const (
	kindText = iota
	kindThinking
	kindArguments
	kindSignature
)

const deltaPrefix = `{"type":"content_block_delta","index":`

// delta decodes a content_block_delta by hand: it is most of a stream, and
// sonic would cost more than the whole budget of an event. The shape the API
// sends, {"type":"content_block_delta","index":N,"delta":{"type":T,F:"…"}}
// (closing braces possibly padded with spaces), is read in one pass; any
// other spelling goes to deltaGeneral, which gives the same result. rest
// is data past deltaPrefix.
func (d *StreamDecoder) delta(dst []codec.Event, data, rest []byte) ([]codec.Event, error) {
	idx, n := 0, 0
	for ; n < len(rest) && n < 9 && '0' <= rest[n] && rest[n] <= '9'; n++ {
		idx = idx*10 + int(rest[n]-'0')
	}
	rest, ok := bytes.CutPrefix(rest[n:], []byte(`,"delta":{"type":"`))
	if n == 0 || n > 1 && data[len(deltaPrefix)] == '0' || !ok {
		return d.deltaGeneral(dst, data)
	}
	kind := deltaKindOf(rest)
	if kind < 0 {
		return d.deltaGeneral(dst, data)
	}
	rest = rest[len(deltaKinds[kind].rest):]
	end := rawjson.StringEnd(rest, 0)
	if end < 0 || !closesTwice(rest[end:]) {
		return d.deltaGeneral(dst, data)
	}
	return d.emitDelta(dst, idx, kind, rest[:end])
}

// deltaKindOf returns the kind of delta whose type and key b starts with
// (deltaKinds' rest), or -1.
func deltaKindOf(b []byte) int {
	if len(b) < 2 {
		return -1
	}
	k := kindText
	switch {
	case b[0] == 't' && b[1] == 'h':
		k = kindThinking
	case b[0] == 'i':
		k = kindArguments
	case b[0] == 's':
		k = kindSignature
	}
	if !bytes.HasPrefix(b, []byte(deltaKinds[k].rest)) {
		return -1
	}
	return k
}

// closesTwice reports whether b is two closing braces, with optional
// whitespace around them.
func closesTwice(b []byte) bool {
	braces := 0
	for _, c := range b {
		switch c {
		case '}':
			braces++
		case ' ', '\t', '\r', '\n':
		default:
			return false
		}
	}
	return braces == 2
}

// deltaGeneral decodes a content_block_delta of any spelling. An event so
// named whose data is of another type is read as its type says, as the
// SDKs read it (they pick the event by its name, its kind by the data's
// type): a message_delta so named still reports its usage.
func (d *StreamDecoder) deltaGeneral(dst []codec.Event, data []byte) ([]codec.Event, error) {
	if t := dataType(data); t != nil && string(t) != "content_block_delta" {
		return d.decodeOther(dst, data)
	}
	return d.deltaFields(dst, data)
}

// deltaFields decodes a content_block_delta's index and delta, whatever
// their spelling.
func (d *StreamDecoder) deltaFields(dst []codec.Event, data []byte) ([]codec.Event, error) {
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
			return d.emitDelta(dst, idx, k, span(delta, g[k+1]))
		}
	}
	// citations_delta and later kinds carry nothing canonical, but the
	// block must exist.
	_, err := d.block(idx, "content_block_delta")
	return dst, err
}

// emitDelta appends the delta event of the given kind (deltaKinds) with
// the JSON string value v, for the upstream block idx.
func (d *StreamDecoder) emitDelta(dst []codec.Event, idx, kind int, v []byte) ([]codec.Event, error) {
	b, err := d.block(idx, "content_block_delta")
	if err != nil || b.canon < 0 || !b.open {
		return dst, err
	}
	s, err := d.unquote(v)
	if err != nil {
		return dst, fmt.Errorf("anthropic: %s: %w", deltaKinds[kind].typ, err)
	}
	if s == "" {
		return dst, nil // the first input_json_delta is often empty
	}
	switch kind {
	case kindArguments:
		return append(dst, codec.Event{Kind: codec.EventDelta, Index: b.canon, Block: b.kind, Arguments: s}), nil
	case kindSignature:
		return append(dst, codec.Event{Kind: codec.EventDelta, Index: b.canon, Block: b.kind, Signature: s}), nil
	}
	return append(dst, codec.Event{Kind: codec.EventDelta, Index: b.canon, Block: b.kind, Text: s}), nil
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
	if err := d.readEvent(data); err != nil {
		return dst, err
	}
	ev := &d.ev
	switch ev.Type {
	case "message_start":
		if err := d.lastMessage(data); err != nil {
			return dst, err
		}
		d.usage = usageTotals{}
		if err := d.usage.apply(&ev.Message.Usage); err != nil {
			return dst, err
		}
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
		if err := d.usage.apply(&ev.Usage); err != nil {
			return dst, err
		}
		if ev.Delta.StopReason != "" && !d.finished {
			d.finished = true
			dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: ParseStopReason(ev.Delta.StopReason),
				StopSequence: ev.Delta.StopSequence})
		}
		return append(dst, codec.Event{Kind: codec.EventUsage, Usage: d.usage.canonical()}), nil
	case "error":
		return d.appendError(dst), nil
	}
	return dst, nil
}

// decodeError decodes an event named error as the stream's error whatever
// its data's type: anthropic-sdk-go's Stream.Next fails on it without
// reading its type, so a usage or a text in it reaches no client.
func (d *StreamDecoder) decodeError(dst []codec.Event, data []byte) ([]codec.Event, error) {
	if err := d.readEvent(data); err != nil {
		return dst, err
	}
	return d.appendError(dst), nil
}

// readEvent decodes data into d.ev.
func (d *StreamDecoder) readEvent(data []byte) error {
	d.ev.reset()
	if err := d.json.decode(data, &d.ev); err != nil {
		return fmt.Errorf("anthropic: cannot decode stream event: %w", err)
	}
	return nil
}

// appendError ends the stream with the error d.ev carries.
func (d *StreamDecoder) appendError(dst []codec.Event) []codec.Event {
	d.failed = true
	e := &d.ev.Error
	return append(dst, codec.Event{Kind: codec.EventError, Err: &codec.Error{
		Status:  statusForType(e.Type),
		Kind:    KindForType(e.Type, statusForType(e.Type)),
		Message: strings.Clone(e.Message),
		Type:    strings.Clone(e.Type),
	}})
}

// lastMessage reads the message of a message_start again, alone, when
// the event names one more than once or with escapes: sonic merged them,
// a client's JSON parser reads the last whole.
func (d *StreamDecoder) lastMessage(data []byte) error {
	m := [...]rawjson.Last{{Key: "message"}}
	if rawjson.LastKeys(data, 0, m[:]); !m[0].Again {
		return nil
	}
	msg := &d.ev.Message
	msg.reset()
	if err := d.json.decode(data[m[0].At:rawjson.ValueEnd(data, m[0].At)], msg); err != nil {
		return fmt.Errorf("anthropic: cannot decode stream event: %w", err)
	}
	return nil
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
