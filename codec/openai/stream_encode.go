package openai

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

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

// StreamEncoder turns canonical events into an OpenAI client's SSE events
// (chat.completion.chunk). The zero value needs a Reset before use; it
// implements codec.StreamEncoder. It is not safe for concurrent use.
type StreamEncoder struct {
	info codec.StreamInfo
	// head is every chunk's beginning, up to and including `"choices":[`,
	// built once per stream.
	head []byte
	// contentHead is a content delta chunk up to its text: head and the
	// delta's start, made once a stream, as content deltas are most of it.
	contentHead             []byte
	started, finished, done bool
	// calls counts the tool calls sent; call is the index of the open one.
	calls, call int
	// sig collects the signature of the open thinking block.
	sig []byte
}

// Reset readies e for a new stream described by info, keeping its buffers.
func (e *StreamEncoder) Reset(info codec.StreamInfo) {
	*e = StreamEncoder{info: info, head: e.head[:0], contentHead: e.contentHead[:0], sig: e.sig[:0]}
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
	e.contentHead = append(e.open(e.contentHead[:0]), `"content":`...)
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
		dst = append(dst, e.contentHead...)
		dst = codec.AppendText(dst, ev)
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
