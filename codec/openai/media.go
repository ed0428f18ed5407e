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
// whose seconds, rounded up, are Units, as are those of a verbose_json
// transcript's "duration" when it has no usage. ok is false for an answer
// that is not JSON (text, srt, vtt) or has neither (dall-e). A streamed
// transcription's transcript.text.done event reads the same way.
func MediaUsage(body []byte) (_ codec.Usage, ok bool) {
	top := [...]rawjson.Field{{Key: "usage"}, {Key: "duration"}}
	if rawjson.Lookup(body, top[:], false) != nil {
		return codec.Usage{}, false
	}
	if top[0].Start < 0 {
		return seconds(body, top[1])
	}
	u := body[top[0].Start:top[0].End]
	in := [...]rawjson.Field{{Key: "input_tokens"}, {Key: "output_tokens"}, {Key: "seconds"}}
	if rawjson.KindOf(u) != rawjson.KindObject || rawjson.Lookup(u, in[:], false) != nil {
		return codec.Usage{}, false
	}
	if in[0].Start < 0 {
		return seconds(u, in[2])
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

// seconds is the usage of a number of seconds of audio at f in b, rounded
// up; ok is false when there is none.
func seconds(b []byte, f rawjson.Field) (_ codec.Usage, ok bool) {
	if f.Start < 0 {
		return codec.Usage{}, false
	}
	n, err := strconv.ParseFloat(string(b[f.Start:f.End]), 64)
	if err != nil || !(n >= 0 && n <= math.MaxInt32) {
		return codec.Usage{}, false
	}
	return codec.Usage{Units: int(math.Ceil(n))}, true
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
