package openai

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// MediaUsage reads the tokens of an images or transcription answer, when
// it reports them: "usage" with input_tokens and output_tokens
// (gpt-image-1, gpt-4o-transcribe). ok is false for an answer that is not
// JSON (text, srt, vtt) or has no such usage (dall-e, whisper, whose
// transcription usage counts seconds).
func MediaUsage(body []byte) (_ codec.Usage, ok bool) {
	top := [...]rawjson.Field{{Key: "usage"}}
	if rawjson.Lookup(body, top[:], false) != nil || top[0].Start < 0 {
		return codec.Usage{}, false
	}
	u := body[top[0].Start:top[0].End]
	in := [...]rawjson.Field{{Key: "input_tokens"}, {Key: "output_tokens"}}
	if rawjson.KindOf(u) != rawjson.KindObject || rawjson.Lookup(u, in[:], false) != nil || in[0].Start < 0 {
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
