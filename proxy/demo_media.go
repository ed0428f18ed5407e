package proxy

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"math"
	"mime"
	"mime/multipart"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bytedance/sonic"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// The demo's images and audio: tiny but valid files, the same for the same
// request, in the shapes OpenAI answers them. This is test-grade code: the
// uploads are read with mime/multipart, the answers built with sonic.

const (
	maxDemoImages   = 4    // n above it is a 400
	demoImageSide   = 8    // pixels: the demo draws 8x8 PNGs
	demoImageTokens = 16   // output tokens counted per image
	demoRate        = 8000 // speech: 8 kHz mono 16-bit PCM
	demoSpeechMs    = 250  // of a tone
	demoWordSeconds = 0.4  // a transcript's pace, for its timestamps
)

func demoBadRequest(ctx *fasthttp.RequestCtx, param, msg string) {
	demoError(ctx, &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: param, Message: "demo: " + msg})
}

// demoForm is a multipart/form-data upload: its text fields, and its
// files' names and bytes, by part name ("image[]" as "image").
type demoForm struct {
	fields map[string][]string
	files  map[string][]demoFile
}

type demoFile struct {
	name string
	data []byte
}

func (f *demoForm) value(name string) string {
	if v := f.fields[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// readDemoForm reads the request's upload; false, with a 400 answered,
// when it is not one.
func readDemoForm(ctx *fasthttp.RequestCtx) (*demoForm, bool) {
	_, params, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || params["boundary"] == "" {
		demoBadRequest(ctx, "", "want a multipart/form-data upload")
		return nil, false
	}
	form, err := multipart.NewReader(bytes.NewReader(ctx.PostBody()), params["boundary"]).ReadForm(int64(len(ctx.PostBody())) + 1)
	if err != nil {
		demoBadRequest(ctx, "", "malformed upload: "+err.Error())
		return nil, false
	}
	defer form.RemoveAll() //nolint:errcheck // all in memory: nothing to remove
	f := &demoForm{fields: map[string][]string{}, files: map[string][]demoFile{}}
	for name, v := range form.Value {
		name = strings.TrimSuffix(name, "[]")
		f.fields[name] = append(f.fields[name], v...)
	}
	for name, headers := range form.File {
		name = strings.TrimSuffix(name, "[]")
		for _, h := range headers {
			r, err := h.Open()
			if err != nil {
				demoBadRequest(ctx, name, err.Error())
				return nil, false
			}
			var b bytes.Buffer
			b.ReadFrom(r) //nolint:errcheck // in memory
			r.Close()     //nolint:errcheck
			f.files[name] = append(f.files[name], demoFile{h.Filename, b.Bytes()})
		}
	}
	return f, true
}

// demoImages answers images/generations (JSON), edits and variations
// (uploads with one or more "image" files): n PNGs drawn from the prompt
// and the images' bytes, as b64_json or, for response_format url, as data:
// URLs, with gpt-image-1's usage.
func demoImages(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path())
	var req struct {
		Prompt         string `json:"prompt"`
		N              int    `json:"n"`
		ResponseFormat string `json:"response_format"`
	}
	seed := fnv.New64a()
	if path == "/v1/images/generations" {
		if sonic.Unmarshal(ctx.PostBody(), &req) != nil || req.Prompt == "" {
			demoBadRequest(ctx, "prompt", "want a JSON body with a prompt")
			return
		}
	} else {
		f, ok := readDemoForm(ctx)
		if !ok {
			return
		}
		if len(f.files["image"]) == 0 {
			demoBadRequest(ctx, "image", "want an image file in the upload")
			return
		}
		req.Prompt, req.ResponseFormat = f.value("prompt"), f.value("response_format")
		if req.Prompt == "" && path == "/v1/images/edits" {
			demoBadRequest(ctx, "prompt", "an edit wants a prompt")
			return
		}
		if n := f.value("n"); n != "" {
			var err error
			if req.N, err = strconv.Atoi(n); err != nil {
				demoBadRequest(ctx, "n", "n is not an integer")
				return
			}
		}
		for _, img := range f.files["image"] {
			seed.Write(img.data) //nolint:errcheck // never fails
		}
	}
	n := cmp.Or(req.N, 1)
	if n < 1 || n > maxDemoImages {
		demoBadRequest(ctx, "n", fmt.Sprintf("n must be between 1 and %d", maxDemoImages))
		return
	}
	seed.Write([]byte(req.Prompt)) //nolint:errcheck
	type picture struct {
		B64JSON string `json:"b64_json,omitempty"`
		URL     string `json:"url,omitempty"`
	}
	data := make([]picture, n)
	for i := range data {
		b64 := base64.StdEncoding.EncodeToString(demoPNG(seed.Sum64() + uint64(i)))
		if req.ResponseFormat == "url" {
			data[i].URL = "data:image/png;base64," + b64
		} else {
			data[i].B64JSON = b64
		}
	}
	in, out := codec.EstimateText(len(req.Prompt)), n*demoImageTokens
	body, _ := sonic.Marshal(map[string]any{"created": time.Now().Unix(), "data": data, "usage": map[string]any{
		"input_tokens": in, "output_tokens": out, "total_tokens": in + out,
		"input_tokens_details": map[string]int{"text_tokens": in, "image_tokens": 0}}})
	demoJSON(ctx, body)
}

// demoPNG is an 8x8 checkerboard of two colours drawn from seed.
func demoPNG(seed uint64) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, demoImageSide, demoImageSide))
	c := [2]color.NRGBA{
		{uint8(seed), uint8(seed >> 8), uint8(seed >> 16), 255},
		{uint8(seed >> 24), uint8(seed >> 32), uint8(seed >> 40), 255},
	}
	for y := range demoImageSide {
		for x := range demoImageSide {
			img.SetNRGBA(x, y, c[(x+y)%2])
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img) //nolint:errcheck // into memory
	return b.Bytes()
}

// speech answers audio/speech with a quarter second of a tone pitched from
// the input, as a WAV file (8 kHz mono 16-bit PCM) sent in several chunks
// at the demo's pace, so that the gateway relays it as a stream. Whatever
// response_format asks (OpenAI's default is mp3), the demo answers WAV with
// Content-Type audio/wav: it has no encoder for the others.
func (d *demoUpstream) speech(ctx *fasthttp.RequestCtx) {
	var req struct {
		Input string `json:"input"`
	}
	if sonic.Unmarshal(ctx.PostBody(), &req) != nil || req.Input == "" {
		demoBadRequest(ctx, "input", "want a JSON body with an input")
		return
	}
	wav := demoWAV(req.Input)
	d.paced(ctx, "audio/wav", func(send func(part []byte, wait bool) bool) {
		const chunk = 1000 // bytes: 1/16 s
		if !send(wav[:44], false) {
			return
		}
		for rest := wav[44:]; len(rest) > 0; {
			k := min(chunk, len(rest))
			if !send(rest[:k], true) {
				return
			}
			rest = rest[k:]
		}
	})
}

// demoWAV is the demo's speech for text: a RIFF/WAVE file of demoSpeechMs
// of a sine between 220 and 880 Hz.
func demoWAV(text string) []byte {
	h := fnv.New32a()
	h.Write([]byte(text)) //nolint:errcheck
	hz := 220 + float64(h.Sum32()%661)
	samples := demoRate * demoSpeechMs / 1000
	le := binary.LittleEndian
	b := make([]byte, 0, 44+2*samples)
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+2*samples))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)         // fmt chunk size
	b = le.AppendUint16(b, 1)          // PCM
	b = le.AppendUint16(b, 1)          // mono
	b = le.AppendUint32(b, demoRate)   // sample rate
	b = le.AppendUint32(b, demoRate*2) // byte rate
	b = le.AppendUint16(b, 2)          // block align
	b = le.AppendUint16(b, 16)         // bits per sample
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(2*samples))
	for i := range samples {
		v := 0.3 * math.Sin(2*math.Pi*hz*float64(i)/demoRate)
		b = le.AppendUint16(b, uint16(int16(v*math.MaxInt16)))
	}
	return b
}

// transcribe answers audio/transcriptions and audio/translations: "This is
// the demo transcript (translation) of <file> (<n> bytes).", in each
// response_format (json with gpt-4o-transcribe's token usage, text, srt
// and vtt as text/plain as OpenAI sends them, verbose_json with whisper's
// segments, words when asked, and duration usage), or, for a transcription
// with stream=true, as transcript.text.delta events a word each at the
// demo's pace and a transcript.text.done event with the usage (no [DONE]:
// clients end at the done event).
func (d *demoUpstream) transcribe(ctx *fasthttp.RequestCtx) {
	f, ok := readDemoForm(ctx)
	if !ok {
		return
	}
	files := f.files["file"]
	if len(files) != 1 {
		demoBadRequest(ctx, "file", "want one audio file in the upload")
		return
	}
	task, what, language := "transcribe", "transcript", cmp.Or(f.value("language"), "english")
	if string(ctx.Path()) == "/v1/audio/translations" {
		task, what, language = "translate", "translation", "english"
	}
	text := fmt.Sprintf("This is the demo %s of %s (%d bytes).", what, files[0].name, len(files[0].data))
	words := strings.SplitAfter(text, " ")
	in := 1 + len(files[0].data)/1024 // the demo's audio tokens: one a KiB
	usage := map[string]any{"type": "tokens", "input_tokens": in, "output_tokens": len(words),
		"total_tokens": in + len(words), "input_token_details": map[string]int{"audio_tokens": in, "text_tokens": 0}}
	if task == "transcribe" && f.value("stream") == "true" {
		d.paced(ctx, "text/event-stream", func(send func(part []byte, wait bool) bool) {
			var b []byte
			for i, w := range words {
				data, _ := sonic.Marshal(map[string]string{"type": "transcript.text.delta", "delta": w})
				if b = sse.AppendEvent(b[:0], "", data); !send(b, i > 0) {
					return
				}
			}
			data, _ := sonic.Marshal(map[string]any{"type": "transcript.text.done", "text": text, "usage": usage})
			send(sse.AppendEvent(b[:0], "", data), false)
		})
		return
	}
	seconds := demoWordSeconds * float64(len(words))
	switch format := cmp.Or(f.value("response_format"), "json"); format {
	case "json":
		body, _ := sonic.Marshal(map[string]any{"text": text, "usage": usage})
		demoJSON(ctx, body)
	case "text", "srt", "vtt":
		ctx.SetContentType("text/plain; charset=utf-8")
		switch format {
		case "text":
			ctx.SetBodyString(text + "\n")
		case "srt":
			ctx.SetBodyString("1\n" + demoTimestamp(0, ',') + " --> " + demoTimestamp(seconds, ',') + "\n" + text + "\n\n")
		default:
			ctx.SetBodyString("WEBVTT\n\n" + demoTimestamp(0, '.') + " --> " + demoTimestamp(seconds, '.') + "\n" + text + "\n\n")
		}
	case "verbose_json":
		tokens := make([]int, len(words))
		for i := range tokens {
			tokens[i] = 1000 + i
		}
		v := map[string]any{"task": task, "language": language, "duration": seconds, "text": text,
			"segments": []map[string]any{{"id": 0, "seek": 0, "start": 0.0, "end": seconds, "text": " " + text,
				"tokens": tokens, "temperature": 0.0, "avg_logprob": -0.1, "compression_ratio": 1.0, "no_speech_prob": 0.0}},
			"usage": map[string]any{"type": "duration", "seconds": math.Ceil(seconds)}}
		if slices.Contains(f.fields["timestamp_granularities"], "word") {
			ws := make([]map[string]any, len(words))
			for i, w := range words {
				ws[i] = map[string]any{"word": strings.TrimSpace(w), "start": demoWordSeconds * float64(i), "end": demoWordSeconds * float64(i+1)}
			}
			v["words"] = ws
		}
		body, _ := sonic.Marshal(v)
		demoJSON(ctx, body)
	default:
		demoBadRequest(ctx, "response_format", "response_format must be json, text, srt, verbose_json or vtt")
	}
}

// demoTimestamp is seconds as hh:mm:ss,mmm (SubRip) or hh:mm:ss.mmm
// (WebVTT), by sep.
func demoTimestamp(seconds float64, sep byte) string {
	ms := int(math.Round(seconds * 1000))
	return fmt.Sprintf("%02d:%02d:%02d%c%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}
