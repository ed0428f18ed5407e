package anthropic

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

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
	// textHead is a text delta event up to its text, for the client's
	// block textHeadOf-1 (0: none): made once a block, as text deltas are
	// most of a stream.
	textHead   []byte
	textHeadOf int
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
	*s = StreamEncoder{info: info, open: open[:0], stopSeq: s.stopSeq[:0], textHead: s.textHead[:0]}
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
			return s.textDelta(dst, s.open[n-1].out, e)
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
		dst = s.textDelta(dst, b.out, e)
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
			dst = s.textDelta(dst, b.out, e)
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

// textDelta appends a text delta event of the client's block out, whose
// head (the event up to its text) is made once a block: text deltas are
// most of a stream.
func (s *StreamEncoder) textDelta(dst []byte, out int, e *codec.Event) []byte {
	if s.textHeadOf != out+1 {
		s.textHead, s.textHeadOf = appendTextDeltaHead(s.textHead[:0], out), out+1
	}
	dst = append(dst, s.textHead...)
	dst = codec.AppendText(dst, e)
	return append(dst, evDelEnd...)
}

// appendTextDeltaHead appends a text delta event of the client's block out
// up to its text.
func appendTextDeltaHead(dst []byte, out int) []byte {
	dst = append(dst, evDelta...)
	dst = strconv.AppendInt(dst, int64(out), 10)
	return append(dst, `,"delta":{"type":"text_delta","text":`...)
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
