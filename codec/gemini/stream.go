package gemini

import (
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
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
	*d = StreamDecoder{sd: strDecoder{buf: d.sd.buf[:0]}, tmpl: template{b: d.tmpl.b[:0]}}
}

// Decode appends the events of one chunk: the data of one SSE event, or
// one element of the JSON-array form. event is ignored (Gemini names none).
// A chunk that is not valid JSON is an error and changes nothing.
func (d *StreamDecoder) Decode(dst []codec.Event, event, data []byte) ([]codec.Event, error) {
	p := parser{b: data}
	if d.state.finished || p.peek() == 0 {
		return dst, nil
	}
	d.sd.buf = d.sd.buf[:0] // the previous chunk's strings are done with
	d.callEvents = d.callBuf[:0]
	saved, from := d.state, len(dst)
	c := &d.c
	ok := true
	if n, fast := d.fastChunk(data); fast {
		for i := range d.fastParts[:n] {
			fp := &d.fastParts[i]
			d.wp = wirePart{Text: fp.text, Thought: fp.thought, ThoughtSignature: fp.sig}
			dst = d.part(dst, &d.wp)
		}
	} else {
		d.sd.buf = d.sd.buf[:0]
		ok = readChunk(&p, c, &d.wp, &d.sd, func(w *wirePart) { dst = d.part(dst, w) })
	}
	if !ok {
		d.state = saved
		return dst[:from], errSyntax
	}
	if c.Error != nil {
		d.state = saved
		d.state.finished = true
		e := statusError(0, c.Error)
		return append(dst[:from], codec.Event{Kind: codec.EventError, Err: &e}), nil
	}
	if c.HasUsage {
		d.state.usage = decodeUsage(&c.Usage)
	}
	if !d.state.started {
		d.state.started = true
		d.scope = strings.Clone(responseScope(c.ResponseID, data))
		dst = insertEvent(dst, from, codec.Event{Kind: codec.EventStart, ID: c.ResponseID, Model: c.ModelVersion,
			Usage: codec.Usage{Input: d.state.usage.Input}})
		for k := range d.callEvents {
			d.callEvents[k]++
		}
	}
	d.nameCalls(dst, saved.calls)
	switch {
	case c.FinishReason != "":
		dst = d.finish(dst, stopReason(c.FinishReason, d.state.calls > 0))
	case !c.Candidate && c.BlockReason != "":
		dst = d.finish(dst, codec.StopContentFilter)
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
	if p.Text == "" && sig == "" || p.FunctionResponse.Name != "" || p.InlineData.Data != "" || p.FileData.FileURI != "" || p.ServerSide {
		return dst
	}
	kind := codec.PartText
	if p.Thought {
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
	return append(dst, codec.Event{Kind: codec.EventDelta, Index: st.index, Block: kind, Text: p.Text, Signature: sig})
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

// StreamEncoder turns canonical events into a Gemini stream for a client:
// SSE ("data: <chunk>\r\n\r\n", as Gemini frames it) or, with Array set,
// the JSON-array form of streamGenerateContent without alt=sse.
//
// Each text or thinking delta is a chunk with one part; a tool call is
// buffered from its BlockStart to its BlockStop and sent as one chunk with
// one functionCall part (Gemini sends calls whole), its canonical id as
// functionCall.id, its signature as thoughtSignature. Finish and Usage make
// the last chunk, with finishReason and usageMetadata (the earlier chunks
// carry only the prompt tokens: the output count is not known before the
// end).
// An Error event becomes an {"error": …} chunk and ends the stream.
//
// The encoder copies what it keeps across events, so the events' strings
// need to live only for the call of Encode. Reset before each stream; Array
// survives Reset.
type StreamEncoder struct {
	// Array selects the JSON-array framing instead of SSE.
	Array bool

	info     codec.StreamInfo
	id       []byte
	model    []byte
	usage    codec.Usage
	stop     codec.StopReason
	finished bool // Finish seen
	done     bool // the last chunk (or an error) is written
	ended    bool // End called
	elems    int  // array elements written

	call                                bool // a tool call is being buffered
	callID, callName, callArgs, callSig []byte
}

var _ codec.StreamEncoder = (*StreamEncoder)(nil)

// Reset readies s for a new stream.
func (s *StreamEncoder) Reset(info codec.StreamInfo) {
	*s = StreamEncoder{Array: s.Array, info: info,
		id: s.id[:0], model: s.model[:0],
		callID: s.callID[:0], callName: s.callName[:0], callArgs: s.callArgs[:0], callSig: s.callSig[:0]}
	s.id = append(s.id, info.ID...)
	s.model = append(s.model, info.Model...)
	s.usage.Input = info.InputTokens
}

// Encode appends the chunk that e completes, if any.
func (s *StreamEncoder) Encode(dst []byte, e *codec.Event) []byte {
	if s.done {
		return dst
	}
	switch e.Kind {
	case codec.EventStart:
		if e.ID != "" { // the upstream's id; StreamInfo.ID is the fallback
			s.id = append(s.id[:0], e.ID...)
		}
		if len(s.model) == 0 {
			s.model = append(s.model, e.Model...)
		}
		if e.Usage.Input > 0 {
			s.usage.Input = e.Usage.Input
		}
	case codec.EventBlockStart:
		switch e.Block {
		case codec.PartToolCall:
			s.call = true
			s.callID = append(s.callID[:0], e.ID...)
			s.callName = append(s.callName[:0], e.Name...)
			s.callArgs, s.callSig = s.callArgs[:0], s.callSig[:0]
		case codec.PartRedactedThinking:
			dst = s.begin(dst)
			dst = appendRedacted(dst, e.Data)
			dst = s.end(dst)
		}
	case codec.EventDelta:
		dst = s.delta(dst, e)
	case codec.EventBlockStop:
		if e.Block == codec.PartToolCall {
			dst = s.flushCall(dst)
		}
	case codec.EventFinish:
		s.stop, s.finished = e.Stop, true
	case codec.EventUsage:
		u := e.Usage
		if u.Input == 0 {
			u.Input = s.usage.Input
		}
		s.usage = u
		if s.finished {
			dst = s.last(dst)
		}
	case codec.EventError:
		s.call = false // an unfinished call must not look like one to run
		err := e.Err
		if err == nil {
			err = &codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "the upstream stream failed"}
		}
		dst = s.frame(dst, func(dst []byte) []byte { return AppendError(dst, err) })
		s.done = true
	}
	return dst
}

// delta appends a text or thinking chunk, or buffers a tool call fragment.
func (s *StreamEncoder) delta(dst []byte, e *codec.Event) []byte {
	switch e.Block {
	case codec.PartToolCall:
		if s.call {
			s.callArgs = append(s.callArgs, e.Arguments...)
			if e.Signature != "" {
				s.callSig = append(s.callSig[:0], e.Signature...)
			}
		}
		return dst
	case codec.PartText, codec.PartThinking:
		if e.Text == "" && e.Signature == "" {
			return dst
		}
		dst = s.begin(dst)
		dst = appendTextPart(dst, e.Text, e.Block == codec.PartThinking, s.clientSignature(e.Signature))
		return s.end(dst)
	}
	return dst
}

// flushCall appends the buffered tool call as one functionCall chunk.
func (s *StreamEncoder) flushCall(dst []byte) []byte {
	if !s.call {
		return dst
	}
	s.call = false
	dst = s.begin(dst)
	dst = appendCallPart(dst, rawjson.UnsafeString(s.callID), rawjson.UnsafeString(s.callName), rawjson.UnsafeString(s.callArgs), s.clientSignature(rawjson.UnsafeString(s.callSig)))
	return s.end(dst)
}

// last appends the final chunk: finishReason and usageMetadata.
func (s *StreamEncoder) last(dst []byte) []byte {
	s.done = true
	return s.frame(dst, func(dst []byte) []byte {
		dst = append(dst, `{"candidates":[{`...)
		if s.stop != codec.StopContentFilter {
			dst = append(dst, `"content":{"parts":[{"text":""}],"role":"model"},`...)
		}
		dst = append(dst, `"finishReason":"`...)
		dst = append(dst, finishName(s.stop)...)
		dst = append(dst, `","index":0}]`...)
		if s.usage != (codec.Usage{}) { // all zero: nothing was reported
			dst = append(dst, `,"usageMetadata":`...)
			dst = appendUsage(dst, s.usage)
		}
		return appendTrailer(dst, rawjson.UnsafeString(s.model), rawjson.UnsafeString(s.id))
	})
}

// End writes the last chunk if a Finish came without its Usage and, for the
// array form, closes the array. A tool call still buffered (no BlockStop:
// its arguments may be cut short) is dropped rather than sent.
func (s *StreamEncoder) End(dst []byte) []byte {
	if s.ended {
		return dst
	}
	s.ended = true
	if !s.done && s.finished {
		dst = s.last(dst)
	}
	if s.Array {
		if s.elems == 0 {
			dst = AppendArrayStart(dst)
		}
		dst = AppendArrayEnd(dst)
	}
	return dst
}

// begin opens a chunk with one part, up to the part.
func (s *StreamEncoder) begin(dst []byte) []byte {
	dst = s.open(dst)
	return append(dst, `{"candidates":[{"content":{"parts":[`...)
}

// end closes a chunk opened by begin. Like Gemini's, the chunk carries the
// usage known so far: the prompt tokens, once the upstream reported them.
func (s *StreamEncoder) end(dst []byte) []byte {
	dst = append(dst, `],"role":"model"},"index":0}]`...)
	if in := s.usage.Input; in > 0 {
		dst = append(dst, `,"usageMetadata":{"promptTokenCount":`...)
		dst = strconv.AppendInt(dst, int64(in), 10)
		dst = append(dst, `,"totalTokenCount":`...)
		dst = strconv.AppendInt(dst, int64(in), 10)
		dst = append(dst, '}')
	}
	dst = appendTrailer(dst, rawjson.UnsafeString(s.model), rawjson.UnsafeString(s.id))
	return s.close(dst)
}

// frame appends the chunk that body appends, framed.
func (s *StreamEncoder) frame(dst []byte, body func([]byte) []byte) []byte {
	return s.close(body(s.open(dst)))
}

func (s *StreamEncoder) open(dst []byte) []byte {
	if !s.Array {
		return append(dst, "data: "...)
	}
	if s.elems == 0 {
		dst = AppendArrayStart(dst)
	} else {
		dst = append(dst, arraySeparator...)
	}
	s.elems++
	return dst
}

func (s *StreamEncoder) close(dst []byte) []byte {
	if s.Array {
		return dst
	}
	return append(dst, "\r\n\r\n"...)
}

// clientSignature is sig as the client reads it, tagged when the upstream
// is of another style (codec.TagSignature).
func (s *StreamEncoder) clientSignature(sig string) string {
	return clientSignature(codec.TagSignature(sig, s.info.Origin, codec.DialectGemini))
}
