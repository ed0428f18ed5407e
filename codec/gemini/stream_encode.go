package gemini

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// StreamEncoder turns canonical events into a Gemini stream for a client,
// in SSE ("data: <chunk>\r\n\r\n", as Gemini frames it); Framing turns
// that into the JSON-array form of streamGenerateContent without alt=sse.
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
// need to live only for the call of Encode. Reset before each stream.
type StreamEncoder struct {
	info     codec.StreamInfo
	id       []byte
	model    []byte
	usage    codec.Usage
	stop     codec.StopReason
	finished bool // Finish seen
	done     bool // the last chunk (or an error) is written
	ended    bool // End called

	call                                bool // a tool call is being buffered
	callID, callName, callArgs, callSig []byte

	// tail is what closes a chunk after its part (end), made when first
	// needed and again when what it says changes (the prompt tokens, the
	// model, the id): a stream's chunks repeat it.
	tail   []byte
	tailOK bool
}

var _ codec.StreamEncoder = (*StreamEncoder)(nil)

// Reset readies s for a new stream.
func (s *StreamEncoder) Reset(info codec.StreamInfo) {
	*s = StreamEncoder{info: info,
		id: s.id[:0], model: s.model[:0], tail: s.tail[:0],
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
		s.tailOK = false
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
		s.usage, s.tailOK = u, false
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
		if e.Block == codec.PartText && e.Signature == "" { // the common chunk
			dst = codec.AppendText(append(dst, chunkOpen+`{"text":`...), e)
			return s.end(append(dst, '}'))
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

// End writes the last chunk if a Finish came without its Usage. A tool call still buffered (no BlockStop:
// its arguments may be cut short) is dropped rather than sent.
func (s *StreamEncoder) End(dst []byte) []byte {
	if s.ended {
		return dst
	}
	s.ended = true
	if !s.done && s.finished {
		dst = s.last(dst)
	}
	return dst
}

// chunkOpen opens an SSE chunk with one part, up to the part.
const chunkOpen = `data: {"candidates":[{"content":{"parts":[`

// begin opens a chunk with one part, up to the part.
func (s *StreamEncoder) begin(dst []byte) []byte { return append(dst, chunkOpen...) }

// end closes a chunk opened by begin (its tail).
func (s *StreamEncoder) end(dst []byte) []byte {
	if !s.tailOK {
		s.tail, s.tailOK = s.appendTail(s.tail[:0]), true
	}
	return append(dst, s.tail...)
}

// appendTail appends what closes a chunk after its part. Like Gemini's,
// the chunk carries the usage known so far: the prompt tokens, once the
// upstream reported them.
func (s *StreamEncoder) appendTail(dst []byte) []byte {
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

func (s *StreamEncoder) open(dst []byte) []byte { return append(dst, "data: "...) }

func (s *StreamEncoder) close(dst []byte) []byte { return append(dst, "\r\n\r\n"...) }

// clientSignature is sig as the client reads it, tagged when the upstream
// is of another style (codec.TagSignature).
func (s *StreamEncoder) clientSignature(sig string) string {
	return clientSignature(codec.TagSignature(sig, s.info.Origin, codec.DialectGemini))
}
