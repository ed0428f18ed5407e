package responses

import (
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Encoding (canonical events → a Responses client's typed events). Each
// event is "event: <type>" and a data line with the same "type" and an
// increasing "sequence_number" from 0:
//
//	response.created, response.in_progress      the Response, in progress, no output
//	per block, one output item at output_index n:
//	  response.output_item.added                 the item, in progress and empty
//	  text:      response.content_part.added, response.output_text.delta*,
//	             response.output_text.done, response.content_part.done
//	  thinking:  response.reasoning_summary_part.added (with its first text),
//	             response.reasoning_summary_text.delta*,
//	             response.reasoning_summary_text.done, response.reasoning_summary_part.done
//	  tool call: response.function_call_arguments.delta*, response.function_call_arguments.done
//	  response.output_item.done                  the item, whole
//	response.completed or response.incomplete    the Response, whole, with usage
//
// The events that close an item wait for the next block, the stop reason
// or the end, whichever comes first (an upstream such as Anthropic ends
// its last block before it says why it stopped): the last item of an
// incomplete response is itself incomplete (itemStatus), in its
// output_item.done as in the final Response.
//
// A failure (codec.EventError) is an "error" event, then response.failed
// with the output so far. The encoder keeps the output (its text in one
// buffer) to write it whole at the end; Response gives it to the proxy.

// StreamEncoder turns canonical events into a Responses client's SSE
// events. The zero value needs a Reset before use; it implements
// codec.StreamEncoder. It is not safe for concurrent use.
type StreamEncoder struct {
	obj                     object
	origin                  string
	seq                     counter // the next event's sequence_number
	started, ended, summary bool
	// items are the output items so far, open the index of the one under
	// way (-1 when none); text holds their text and arguments, meta their
	// ids, names, signatures and data, sig the open block's signature.
	// closing: the open item's block ended, its closing events wait for
	// what says whether it is the last.
	items   []item
	open    int
	closing bool
	text    []byte
	own     []byte  // the encoder's own text buffer while text is a spill
	spill   *[]byte // text's pooled buffer, past maxKeptText (nil: none)
	meta    []byte
	sig     []byte
	itemID  []byte // the open item's id, as JSON
	// head is the start of the open item's delta events, up to the delta
	// itself, made at its first (headOf: the item's index + 1; 0: none).
	head     []byte
	headOf   int
	stop     codec.StopReason
	usage    codec.Usage
	hasUsage bool
	failure  codec.Error
	resp     codec.Response
}

// item is one output item of the stream: spans of the encoder's buffers.
type item struct {
	kind                      codec.PartKind
	text, id, name, sig, data span
}

type span struct{ start, end int }

// Reset readies e for a new stream described by info, keeping its buffers
// (a spilled text's goes back to its pool).
func (e *StreamEncoder) Reset(info codec.StreamInfo) {
	text := e.text[:0]
	if e.spill != nil {
		text = e.own[:0]
		putSpill(e.spill)
	}
	*e = StreamEncoder{origin: info.Origin, open: -1, items: e.items[:0], text: text, meta: e.meta[:0],
		sig: e.sig[:0], itemID: e.itemID[:0], head: e.head[:0], resp: codec.Response{Parts: e.resp.Parts[:0]}}
	e.obj.init(&info, "", "")
	e.obj.model = info.Model
	e.seq.reset()
}

// Encode appends the events of ev to dst.
func (e *StreamEncoder) Encode(dst []byte, ev *codec.Event) []byte {
	if ev.Kind == codec.EventDelta && e.started && !e.ended {
		return e.delta(dst, ev) // most events
	}
	if e.ended {
		return dst
	}
	if !e.started && ev.Kind != codec.EventError {
		dst = e.begin(dst, ev.Model)
	}
	switch ev.Kind {
	case codec.EventBlockStart:
		dst = e.blockStart(dst, ev)
	case codec.EventDelta:
		dst = e.delta(dst, ev)
	case codec.EventBlockStop:
		e.closing = e.open >= 0
	case codec.EventFinish:
		e.stop = ev.Stop
		if e.closing {
			dst = e.blockStop(dst, true)
		}
	case codec.EventUsage:
		e.usage, e.hasUsage = ev.Usage, true
	case codec.EventError:
		if e.closing {
			dst = e.blockStop(dst, false)
		}
		dst = e.fail(dst, ev.Err)
	}
	return dst
}

// End appends the response's last event: completed, or incomplete with
// its reason. After a failure it appends nothing.
func (e *StreamEncoder) End(dst []byte) []byte {
	if e.ended {
		return dst
	}
	if !e.started {
		dst = e.begin(dst, "")
	}
	if e.open >= 0 {
		dst = e.blockStop(dst, true)
	}
	e.ended = true
	status, reason := statusOf(e.stop)
	dst = e.appendEvent(dst, "response."+status)
	dst = append(dst, `"response":`...)
	dst = e.appendObject(dst, status, reason, nil)
	return e.closeEvent(append(dst, ','))
}

// Response is the response as streamed so far, for the proxy to store
// (OutputItems): its parts point into the encoder's buffers, valid until
// the next Encode or Reset (a growing text's old buffer goes back to a
// pool shared by every encoder).
func (e *StreamEncoder) Response() *codec.Response {
	r := &e.resp
	r.ID, r.Model, r.Stop, r.Usage = e.obj.id, e.obj.model, e.stop, e.usage
	r.Parts = r.Parts[:0]
	for i := range e.items {
		it := &e.items[i]
		r.Parts = append(r.Parts, codec.Part{Kind: it.kind, Text: e.str(e.text, it.text), ID: e.str(e.meta, it.id),
			Name: e.str(e.meta, it.name), Arguments: e.str(e.text, it.text), Signature: e.str(e.meta, it.sig),
			Data: e.str(e.meta, it.data)})
		if it.kind != codec.PartToolCall {
			r.Parts[i].Arguments = ""
		} else {
			r.Parts[i].Text = ""
		}
	}
	return r
}

func (e *StreamEncoder) str(b []byte, s span) string { return rawjson.UnsafeString(b[s.start:s.end]) }

// begin appends response.created and response.in_progress.
func (e *StreamEncoder) begin(dst []byte, model string) []byte {
	e.started = true
	if e.obj.model == "" {
		e.obj.model = strings.Clone(model) // the upstream's, when the proxy gave none
	}
	for _, typ := range [...]string{"response.created", "response.in_progress"} {
		dst = e.appendEvent(dst, typ)
		dst = append(dst, `"response":`...)
		dst = e.obj.appendHead(dst, "in_progress", "", nil)
		dst = append(dst, "[]"...)
		dst = e.obj.appendTail(dst, nil)
		dst = e.closeEvent(append(dst, ','))
	}
	return dst
}

// appendObject appends the Response object with the output so far.
func (e *StreamEncoder) appendObject(dst []byte, status, reason string, failure *codec.Error) []byte {
	dst = e.obj.appendHead(dst, status, reason, failure)
	r := e.Response()
	dst = appendOutput(dst, r.Parts, e.obj.items, e.origin, status)
	if !e.hasUsage {
		return e.obj.appendTail(dst, nil)
	}
	return e.obj.appendTail(dst, &e.usage)
}

// appendEvent appends the start of an event of type typ, up to the
// first member after "type".
func (e *StreamEncoder) appendEvent(dst []byte, typ string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, typ...)
	dst = append(dst, "\ndata: {\"type\":\""...)
	dst = append(dst, typ...)
	return append(dst, `",`...)
}

// closeEvent ends an event with its sequence number.
func (e *StreamEncoder) closeEvent(dst []byte) []byte {
	dst = append(dst, e.seq.tail()...)
	e.seq.next()
	return dst
}

// The end of every event: its sequence number, after the end of a text
// delta's string and its logprobs (textEnd), so that a text delta ends in
// one append.
const (
	textEnd  = `","logprobs":[],`
	seqStart = textEnd + `"sequence_number":`
	seqEnd   = "}\n\n"
)

// counter is the end of an event with the next sequence number, its digits
// counted up in place: formatting a sequence number anew for every event
// cost as much as the rest of a text delta's framing.
type counter struct {
	buf  [len(seqStart) + 20 + len(seqEnd)]byte
	last int // the index of the last digit
}

func (c *counter) reset() {
	c.last = copy(c.buf[:], seqStart+"0"+seqEnd) - len(seqEnd) - 1
}

// tail is the end of an event: `"sequence_number":n}` and the blank line.
func (c *counter) tail() []byte { return c.buf[len(textEnd) : c.last+1+len(seqEnd)] }

// textTail is the end of a text delta: the delta's closing quote, its
// logprobs, then tail.
func (c *counter) textTail() []byte { return c.buf[:c.last+1+len(seqEnd)] }

func (c *counter) next() {
	if c.buf[c.last] != '9' {
		c.buf[c.last]++ // nine times in ten
		return
	}
	c.carry()
}

// carry counts up a number that ends in 9: apart, so that next inlines.
//
//go:noinline
func (c *counter) carry() {
	for i := c.last; i >= len(seqStart); i-- {
		if c.buf[i] != '9' {
			c.buf[i]++
			return
		}
		c.buf[i] = '0'
	}
	c.buf[len(seqStart)] = '1' // all nines: one digit more
	c.last++
	copy(c.buf[c.last:], "0"+seqEnd)
}

// appendItemEvent appends the start of an event about the open item:
// its type, item_id and output_index.
func (e *StreamEncoder) appendItemEvent(dst []byte, typ string) []byte {
	dst = e.appendEvent(dst, typ)
	dst = append(dst, `"item_id":`...)
	dst = append(dst, e.itemID...)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(e.open), 10)
	return append(dst, ',')
}

func (e *StreamEncoder) blockStart(dst []byte, ev *codec.Event) []byte {
	if e.open >= 0 {
		dst = e.blockStop(dst, false)
	}
	kind := ev.Block
	if !isItem(kind) {
		kind = codec.PartText
	}
	e.open, e.summary, e.sig = len(e.items), false, e.sig[:0]
	it := item{kind: kind, text: span{len(e.text), len(e.text)}}
	it.id, it.name, it.data = e.keep(ev.ID), e.keep(ev.Name), e.keep(ev.Data)
	e.items = append(e.items, it)
	prefix := "msg_"
	switch kind {
	case codec.PartThinking, codec.PartRedactedThinking:
		prefix = "rs_"
	case codec.PartToolCall:
		prefix = "fc_"
	}
	e.itemID = appendItemID(e.itemID[:0], prefix, e.obj.items, e.open)

	dst = e.appendEvent(dst, "response.output_item.added")
	dst = append(dst, `"output_index":`...)
	dst = strconv.AppendInt(dst, int64(e.open), 10)
	dst = append(dst, `,"item":`...)
	switch kind {
	case codec.PartText:
		dst = appendMessageOpen(dst, e.obj.items, e.open, "in_progress")
		dst = append(dst, "]},"...)
		dst = e.closeEvent(dst)
		dst = e.appendItemEvent(dst, "response.content_part.added")
		dst = append(dst, `"content_index":0,"part":`...)
		dst = appendTextPart(dst, "")
		dst = append(dst, ',')
	case codec.PartToolCall:
		dst = appendCall(dst, e.obj.items, e.open, "in_progress", ev.ID, ev.Name, "")
		dst = append(dst, ',')
	default:
		dst = appendReasoningOpen(dst, e.obj.items, e.open)
		dst = append(dst, "]},"...)
	}
	return e.closeEvent(dst)
}

// keep copies s into the encoder's meta buffer.
func (e *StreamEncoder) keep(s string) span {
	start := len(e.meta)
	e.meta = append(e.meta, s...)
	return span{start, len(e.meta)}
}

func (e *StreamEncoder) delta(dst []byte, ev *codec.Event) []byte {
	if e.open < 0 || e.closing {
		dst = e.blockStart(dst, &codec.Event{Kind: codec.EventBlockStart, Block: ev.Block, Index: ev.Index})
	}
	it := &e.items[e.open]
	switch it.kind {
	case codec.PartText:
		if ev.Text == "" {
			return dst
		}
		e.keepText(ev.Text)
		it.text.end = len(e.text)
		dst = e.deltaHead(dst, "response.output_text.delta", `"content_index":0,"delta":"`)
		dst = codec.AppendTextInside(dst, ev)
		dst = append(dst, e.seq.textTail()...)
		e.seq.next()
		return dst
	case codec.PartToolCall:
		if ev.Arguments == "" {
			return dst
		}
		e.keepText(ev.Arguments)
		it.text.end = len(e.text)
		dst = e.deltaHead(dst, "response.function_call_arguments.delta", `"delta":"`)
		dst = rawjson.AppendEscaped(dst, ev.Arguments)
	case codec.PartThinking:
		e.sig = append(e.sig, ev.Signature...)
		if ev.Text == "" {
			return dst
		}
		if !e.summary {
			e.summary = true
			dst = e.appendItemEvent(dst, "response.reasoning_summary_part.added")
			dst = append(dst, `"summary_index":0,"part":`...)
			dst = appendSummaryPart(dst, "")
			dst = append(dst, ',')
			dst = e.closeEvent(dst)
		}
		e.keepText(ev.Text)
		it.text.end = len(e.text)
		dst = e.deltaHead(dst, "response.reasoning_summary_text.delta", `"summary_index":0,"delta":"`)
		dst = codec.AppendTextInside(dst, ev)
	default:
		return dst
	}
	return e.closeEvent(append(dst, '"', ','))
}

// keepText adds a delta's text to the stream's (the open item's span is
// the caller's to move).
func (e *StreamEncoder) keepText(s string) {
	if len(e.text)+len(s) > cap(e.text) {
		e.growText(len(s))
	}
	e.text = append(e.text, s...)
}

// growText makes room in the text buffer for more bytes, doubling it:
// append grows a large slice by a quarter, which copies a long answer's
// text some 25 times over, twice with this. Up to maxKeptText the buffer
// is the encoder's own, kept by Reset; past it, a spill taken from a pool
// and given back by Reset, so that a long answer costs no allocation once
// the pools hold its sizes, and the encoder's own buffer stays small (an
// idle pooled encoder holds its spill until its next Reset, or the
// garbage collector takes both).
func (e *StreamEncoder) growText(more int) {
	n := len(e.text) + more
	if n <= maxKeptText {
		grown := min(max(n, 2*cap(e.text)), maxKeptText)
		text := make([]byte, len(e.text), grown) // append would round the capacity up
		copy(text, e.text)
		e.text = text
		return
	}
	spill := getSpill(n, cap(e.text))
	*spill = append(*spill, e.text...)
	if e.spill != nil {
		putSpill(e.spill)
	} else {
		e.own = e.text
	}
	e.spill, e.text = spill, *spill
}

// deltaHead appends the start of a delta event of type typ about the open
// item, up to member, the delta's key and its opening quote: made once an
// item (makeHead), as its deltas are most of a stream's events.
func (e *StreamEncoder) deltaHead(dst []byte, typ, member string) []byte {
	if e.headOf != e.open+1 {
		e.makeHead(typ, member)
	}
	return append(dst, e.head...)
}

func (e *StreamEncoder) makeHead(typ, member string) {
	e.head = e.appendItemEvent(e.head[:0], typ)
	e.head = append(e.head, member...)
	e.headOf = e.open + 1
}

// blockStop appends the events that close the open item, and the item
// whole; last: no item follows it, so an incomplete response's stop
// reason makes it incomplete.
func (e *StreamEncoder) blockStop(dst []byte, last bool) []byte {
	if e.open < 0 {
		return dst
	}
	it := &e.items[e.open]
	text := e.str(e.text, it.text)
	switch it.kind {
	case codec.PartText:
		dst = e.appendDone(dst, "response.output_text.done", "response.content_part.done", `"content_index":0,`,
			`,"logprobs":[],`, text, appendTextPart)
	case codec.PartToolCall:
		dst = e.appendItemEvent(dst, "response.function_call_arguments.done")
		dst = append(dst, `"arguments":`...)
		dst = rawjson.AppendString(dst, arguments(text))
		dst = append(dst, ',')
		dst = e.closeEvent(dst)
	case codec.PartThinking:
		it.sig = e.keep(rawjson.UnsafeString(e.sig))
		if e.summary {
			dst = e.appendDone(dst, "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
				`"summary_index":0,`, ",", text, appendSummaryPart)
		}
	}
	dst = e.appendEvent(dst, "response.output_item.done")
	dst = append(dst, `"output_index":`...)
	dst = strconv.AppendInt(dst, int64(e.open), 10)
	dst = append(dst, `,"item":`...)
	p := e.Response().Parts[e.open]
	dst = appendItem(dst, &p, e.obj.items, e.open, e.origin, itemStatus(Status(e.stop), last))
	dst = append(dst, ',')
	e.open, e.closing = -1, false
	return e.closeEvent(dst)
}

// appendDone appends the two events that close a text of the open item:
// textEvent with the whole text (then tail), and partEvent with the part
// whole as part writes it; index numbers the part within the item.
func (e *StreamEncoder) appendDone(dst []byte, textEvent, partEvent, index, tail, text string, part func([]byte, string) []byte) []byte {
	dst = e.appendItemEvent(dst, textEvent)
	dst = append(dst, index...)
	dst = append(dst, `"text":`...)
	dst = rawjson.AppendString(dst, text)
	dst = append(dst, tail...)
	dst = e.closeEvent(dst)
	dst = e.appendItemEvent(dst, partEvent)
	dst = append(dst, index...)
	dst = append(dst, `"part":`...)
	dst = part(dst, text)
	return e.closeEvent(append(dst, ','))
}

// fail appends an error event and response.failed with the output so
// far, and ends the stream.
func (e *StreamEncoder) fail(dst []byte, err *codec.Error) []byte {
	e.failure = codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "the upstream stream failed"}
	if err != nil {
		e.failure = *err
	}
	e.ended, e.open, e.closing = true, -1, false
	dst = e.appendEvent(dst, "error")
	dst = append(dst, `"code":`...)
	dst = rawjson.AppendString(dst, failureCode(&e.failure))
	dst = append(dst, `,"message":`...)
	dst = rawjson.AppendString(dst, e.failure.Message)
	dst = append(dst, `,"param":null,`...)
	dst = e.closeEvent(dst)
	dst = e.appendEvent(dst, "response.failed")
	dst = append(dst, `"response":`...)
	dst = e.appendObject(dst, "failed", "", &e.failure)
	return e.closeEvent(append(dst, ','))
}

// AppendStreamError appends err as the events that end a Responses stream
// under way: an error event and response.failed (with no output: the
// stream's own encoder, when there is one, gives the output so far).
func AppendStreamError(dst []byte, err *codec.Error) []byte {
	var e StreamEncoder
	e.Reset(codec.StreamInfo{})
	e.started = true
	return e.fail(dst, err)
}

// Interface guard.
var _ codec.StreamEncoder = (*StreamEncoder)(nil)
