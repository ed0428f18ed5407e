package openai

import (
	"bytes"
	"math"
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// MediaUsage reads the usage of an images or transcription answer, when
// it reports one: "usage" with input_tokens and output_tokens (gpt-image-1,
// gpt-4o-transcribe), or whisper's {"type": "duration", "seconds": n},
// whose seconds, rounded up, are Units. ok is false for an answer that is
// not JSON (text, srt, vtt) or has no such usage (dall-e). A streamed
// transcription's transcript.text.done event reads the same way.
func MediaUsage(body []byte) (_ codec.Usage, ok bool) {
	top := [...]rawjson.Field{{Key: "usage"}}
	if rawjson.Lookup(body, top[:], false) != nil || top[0].Start < 0 {
		return codec.Usage{}, false
	}
	u := body[top[0].Start:top[0].End]
	in := [...]rawjson.Field{{Key: "input_tokens"}, {Key: "output_tokens"}, {Key: "seconds"}}
	if rawjson.KindOf(u) != rawjson.KindObject || rawjson.Lookup(u, in[:], false) != nil {
		return codec.Usage{}, false
	}
	if s := in[2]; in[0].Start < 0 && s.Start >= 0 {
		n, err := strconv.ParseFloat(string(u[s.Start:s.End]), 64)
		if err != nil || !(n >= 0 && n <= math.MaxInt32) {
			return codec.Usage{}, false
		}
		return codec.Usage{Units: int(math.Ceil(n))}, true
	}
	if in[0].Start < 0 {
		return codec.Usage{}, false
	}
	var r codec.Usage
	var err error
	if r.Input, err = count(u[in[0].Start:in[0].End]); err != nil {
		return codec.Usage{}, false
	}
	if f := in[1]; f.Start >= 0 {
		if r.Output, err = count(u[f.Start:f.End]); err != nil {
			return codec.Usage{}, false
		}
	}
	return r, true
}

var (
	strTranscriptDone = []byte("transcript.text.done")
	strTypeDone       = []byte(`"transcript.text.done"`)
)

// TranscriptUsage reads the usage of one event of a streamed transcription
// (ev as sse.Next frames it): the transcript.text.done event's, as
// MediaUsage reads it. ok is false for any other event, which costs a
// search for the event's name and nothing more.
func TranscriptUsage(ev []byte) (_ codec.Usage, ok bool) {
	if !bytes.Contains(ev, strTranscriptDone) {
		return codec.Usage{}, false
	}
	data, multi, ok := sse.Data(ev)
	if !ok || multi {
		return codec.Usage{}, false
	}
	typ := [...]rawjson.Field{{Key: "type"}}
	if rawjson.Lookup(data, typ[:], false) != nil || typ[0].Start < 0 ||
		!bytes.Equal(data[typ[0].Start:typ[0].End], strTypeDone) {
		return codec.Usage{}, false
	}
	return MediaUsage(data)
}
