package gemini

import (
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
)

// A Gemini stream is a sequence of whole GenerateContentResponse chunks:

// with ?alt=sse each is one "data:" event ("data: <json>\r\n\r\n"), without
// it they are the elements of one JSON array (array.go).
// There are no block events and no terminator: the last chunk carries
// finishReason, and every chunk the cumulative usageMetadata. Function calls
// arrive whole, one part each. An error after the stream started arrives as
// a chunk holding only {"error": {...}}.

// StreamDecoder turns Gemini stream chunks into canonical events. It
// synthesises the blocks Gemini leaves implicit: consecutive text parts
// extend one text block, consecutive thought parts one thinking block, and
// each functionCall is a block of its own whose whole arguments come in one
// Delta. finishReason ends the stream: Finish, then Usage (the last
// cumulative usageMetadata); later chunks are ignored.
//
// A thoughtSignature travels on the Delta of the part it came with (for a
// call, also inside the call's id: EncodeCallID). A signature on an empty
// text part (how Gemini 3 ends an answer) is a Delta with only a Signature.
//
// The zero value is ready to use. The strings of the events point into the
// data passed to Decode or into the decoder's own buffer (unescaped text),
// except tool call ids; they are valid until the next call of Decode, so a
// consumer keeps copies of what it keeps longer.
type StreamDecoder struct {
	state      decoderState
	scope      string // makes synthesised call ids unique
	c          wireChunk
	wp         wirePart
	sd         strDecoder // unescaped strings of the current chunk
	callEvents []int      // the BlockStart events of the current chunk's calls
	callBuf    [4]int
	fastParts  [maxFastParts]fastPart // the parts fastChunk read
	tmpl       template               // fastChunk's last chunk read in full
}

// decoderState is what a chunk changes; a malformed chunk restores it.
type decoderState struct {
	started  bool
	finished bool
	open     bool           // a text or thinking block is open
	block    codec.PartKind // the open block's kind
	index    int            // the open block's index, or the next one's
	calls    int
	usage    codec.Usage
}

var _ codec.StreamDecoder = (*StreamDecoder)(nil)

// Reset readies d for a new stream.
func (d *StreamDecoder) Reset() {
	*d = StreamDecoder{sd: strDecoder{buf: d.sd.buf[:0]}, tmpl: template{b: d.tmpl.b[:0], lit: d.tmpl.lit[:0]}}
}

// Decode appends the events of one chunk: the data of one SSE event, or
// one element of the JSON-array form. event is ignored (Gemini names none).
// A chunk that is not valid JSON is an error and changes nothing.
func (d *StreamDecoder) Decode(dst []codec.Event, event, data []byte) ([]codec.Event, error) {
	if d.state.finished {
		return dst, nil
	}
	// The previous chunk's strings are done with. (Those a replay unescapes
	// before it declines stay until the next chunk.)
	d.sd.buf = d.sd.buf[:0]
	// Most chunks: the template's replay (there is none before the first
	// chunk), which starts no stream and names no calls.
	if n, ok := d.replay(data); ok {
		return d.endChunk(d.textParts(dst, n)), nil
	}
	p := parser{b: data}
	if p.peek() == 0 {
		return dst, nil
	}
	d.callEvents = d.callBuf[:0]
	from, calls := len(dst), d.state.calls
	if n, fast := d.fastChunk(data); fast {
		dst = d.textParts(dst, n)
	} else {
		var err error
		if dst, err = d.slowChunk(dst, &p); err != nil || d.state.finished {
			return dst, err // malformed, or an error
		}
	}
	dst = d.endChunk(dst)
	if !d.state.started {
		d.state.started = true
		c := &d.c
		d.scope = strings.Clone(responseScope(c.ResponseID, data))
		dst = insertEvent(dst, from, codec.Event{Kind: codec.EventStart, ID: c.ResponseID, Model: c.ModelVersion,
			Usage: codec.Usage{Input: d.state.usage.Input}})
		for k := range d.callEvents {
			d.callEvents[k]++
		}
	}
	if len(d.callEvents) > 0 {
		d.nameCalls(dst, calls)
	}
	return dst, nil
}

// textParts appends the events of the n parts fastChunk or replay read.
func (d *StreamDecoder) textParts(dst []codec.Event, n int) []codec.Event {
	for i := range d.fastParts[:n] {
		fp := &d.fastParts[i]
		dst = d.textPart(dst, fp)
	}
	return dst
}

// endChunk takes the usage of the chunk read (d.c), and appends the end of
// the stream when the chunk ends it (before a first chunk's Start is
// inserted: the Start carries the usage, and goes before the chunk's
// events).
func (d *StreamDecoder) endChunk(dst []codec.Event) []codec.Event {
	c := &d.c
	if c.HasUsage {
		d.state.usage = decodeUsage(&c.Usage)
	}
	switch {
	case c.FinishReason != "":
		return d.finish(dst, stopReason(c.FinishReason, d.state.calls > 0))
	case !c.Candidate && c.BlockReason != "":
		return d.finish(dst, codec.StopContentFilter)
	}
	return dst
}

// slowChunk appends the events of the chunk at p that the fast path
// declined, read by readChunk. A malformed chunk is an error and changes
// nothing; an error chunk is an EventError, and ends the stream.
func (d *StreamDecoder) slowChunk(dst []codec.Event, p *parser) ([]codec.Event, error) {
	saved, from := d.state, len(dst)
	d.sd.buf = d.sd.buf[:0]
	if !readChunk(p, &d.c, &d.wp, &d.sd, func(w *wirePart) { dst = d.part(dst, w) }) {
		d.state = saved
		return dst[:from], errSyntax
	}
	if d.c.Error != nil {
		d.state = saved
		d.state.finished = true
		e := statusError(0, d.c.Error)
		return append(dst[:from], codec.Event{Kind: codec.EventError, Err: &e}), nil
	}
	return dst, nil
}

// insertEvent inserts e at dst[at].
func insertEvent(dst []codec.Event, at int, e codec.Event) []codec.Event {
	dst = append(dst, codec.Event{})
	copy(dst[at+1:], dst[at:])
	dst[at] = e
	return dst
}

// nameCalls gives the calls of the chunk their canonical ids, now that the
// responseId (which Gemini writes last) is known; first is the ordinal of
// the chunk's first call.
func (d *StreamDecoder) nameCalls(dst []codec.Event, first int) {
	for k, i := range d.callEvents {
		start := &dst[i]
		id := callID(start.ID, d.scope, first+k, dst[i+1].Signature)
		start.ID = id
	}
}

// part appends the events of one part. Parts no other dialect streams
// (media, server-side tool traffic) are dropped.
func (d *StreamDecoder) part(dst []codec.Event, p *wirePart) []codec.Event {
	st := &d.state
	sig := p.ThoughtSignature
	if fc := &p.FunctionCall; fc.Name != "" {
		dst = d.closeBlock(dst)
		st.calls++
		k := codec.PartToolCall
		d.callEvents = append(d.callEvents, len(dst))
		dst = append(dst,
			codec.Event{Kind: codec.EventBlockStart, Index: st.index, Block: k, ID: fc.ID, Name: fc.Name},
			codec.Event{Kind: codec.EventDelta, Index: st.index, Block: k, Arguments: arguments(fc.Args), Signature: sig},
			codec.Event{Kind: codec.EventBlockStop, Index: st.index, Block: k})
		st.index++
		return dst
	}
	if p.FunctionResponse.Name != "" || p.InlineData.Data != "" || p.FileData.FileURI != "" || p.ServerSide {
		return dst
	}
	return d.textPart(dst, &fastPart{text: p.Text, sig: sig, thought: p.Thought})
}

// textPart appends the events of a text or thought part (the only parts
// the fast path reads); plain marks the text's Delta (codec.Event.Plain).
func (d *StreamDecoder) textPart(dst []codec.Event, p *fastPart) []codec.Event {
	text, sig := p.text, p.sig
	if text == "" && sig == "" {
		return dst
	}
	st := &d.state
	kind := codec.PartText
	if p.thought {
		kind = codec.PartThinking
		if data, ok := strings.CutPrefix(sig, redactedPrefix); ok {
			// Redacted thinking the gateway gave a Gemini client (AppendResponse).
			dst = d.closeBlock(dst)
			k := codec.PartRedactedThinking
			dst = append(dst, codec.Event{Kind: codec.EventBlockStart, Index: st.index, Block: k, Data: data},
				codec.Event{Kind: codec.EventBlockStop, Index: st.index, Block: k})
			st.index++
			return dst
		}
	}
	if !st.open || st.block != kind {
		dst = d.closeBlock(dst)
		st.open, st.block = true, kind
		dst = append(dst, codec.Event{Kind: codec.EventBlockStart, Index: st.index, Block: kind})
	}
	// (Set in place: an Event literal appended is built, then copied.)
	dst = append(dst, codec.Event{})
	e := &dst[len(dst)-1]
	e.Kind, e.Index, e.Block, e.Plain, e.Text, e.Signature = codec.EventDelta, st.index, kind, p.plain, text, sig
	return dst
}

func (d *StreamDecoder) closeBlock(dst []codec.Event) []codec.Event {
	st := &d.state
	if !st.open {
		return dst
	}
	st.open = false
	dst = append(dst, codec.Event{Kind: codec.EventBlockStop, Index: st.index, Block: st.block})
	st.index++
	return dst
}

func (d *StreamDecoder) finish(dst []codec.Event, stop codec.StopReason) []codec.Event {
	dst = d.closeBlock(dst)
	d.state.finished = true
	return append(dst, codec.Event{Kind: codec.EventFinish, Stop: stop},
		codec.Event{Kind: codec.EventUsage, Usage: d.state.usage})
}

// End appends what a stream that stopped without a finishReason implies:
// the open block's stop, a Finish with an unknown reason (the stream was
// cut short) and the usage so far. After a finish or an error it appends
// nothing, nor for a stream that never started.
func (d *StreamDecoder) End(dst []codec.Event) []codec.Event {
	if !d.state.started || d.state.finished {
		return dst
	}
	return d.finish(dst, codec.StopUnknown)
}
