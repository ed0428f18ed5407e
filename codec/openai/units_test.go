package openai_test

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// TestMediaUsage: tokens of gpt-image-1 and gpt-4o-transcribe, whisper's
// seconds rounded up as Units, nothing from answers without usage.
func TestMediaUsage(t *testing.T) {
	none := codec.Usage{Input: -1}
	for body, want := range map[string]codec.Usage{
		`{"data":[],"usage":{"input_tokens":10,"output_tokens":20,"total_tokens":30}}`: {Input: 10, Output: 20},
		`{"text":"Hi","usage":{"type":"tokens","input_tokens":5,"output_tokens":3}}`:   {Input: 5, Output: 3},
		`{"text":"Hi","usage":{"type":"duration","seconds":9}}`:                        {Units: 9},
		`{"text":"Hi","usage":{"type":"duration","seconds":2.01}}`:                     {Units: 3},
		`{"text":"Hi","usage":{"type":"duration","seconds":0}}`:                        {},
		`{"text":"Hi","usage":{"type":"duration","seconds":-1}}`:                       none,
		`{"text":"Hi","usage":{"type":"duration","seconds":"9"}}`:                      none,
		`{"text":"Hi","usage":{"input_tokens":"5"}}`:                                   none,
		`{"task":"transcribe","duration":8.47,"text":"Hi","segments":[]}`:              {Units: 9}, // verbose_json
		`{"duration":8.47,"usage":{"type":"duration","seconds":9}}`:                    {Units: 9},
		`{"duration":"long","text":"Hi"}`:                                              none,
		`{"text":"Hi"}`:                                                                none,
		`Hi there.`:                                                                    none,
	} {
		u, ok := openai.MediaUsage([]byte(body))
		if ok != (want != none) || ok && u != want {
			t.Errorf("%s: %+v %v, want %+v", body, u, ok, want)
		}
	}
}

// TestTranscriptUsage: only a streamed transcription's done event has
// usage, whatever the delta events hold.
func TestTranscriptUsage(t *testing.T) {
	f := func(ev string, want codec.Usage, wantOK bool) {
		t.Helper()
		u, ok := openai.TranscriptUsage([]byte(ev))
		if ok != wantOK || u != want {
			t.Errorf("%q: %+v %v, want %+v %v", ev, u, ok, want, wantOK)
		}
	}
	done := codec.Usage{Input: 14, Output: 45}
	f("data: {\"type\":\"transcript.text.done\",\"text\":\"Hi\",\"usage\":{\"type\":\"tokens\",\"input_tokens\":14,"+
		"\"input_token_details\":{\"text_tokens\":0,\"audio_tokens\":14},\"output_tokens\":45,\"total_tokens\":59}}\n\n", done, true)
	f("event: transcript.text.done\r\ndata: {\"usage\":{\"input_tokens\":14,\"output_tokens\":45},\"type\":\"transcript.text.done\"}\r\n\r\n",
		done, true)
	f("data: {\"type\":\"transcript.text.delta\",\"delta\":\"transcript.text.done\"}\n\n", codec.Usage{}, false)
	f("data: {\"type\":\"transcript.text.delta\",\"delta\":\" Hi\"}\n\n", codec.Usage{}, false)
	f("data: {\"type\":\"transcript.text.done\",\"text\":\"Hi\"}\n\n", codec.Usage{}, false)
	f(": transcript.text.done\n\n", codec.Usage{}, false)
	f("data: transcript.text.done\n\n", codec.Usage{}, false)
}

// TestRequestUnits: a speech request counts the characters of its input as
// they decode (escapes and all), an image generation its n.
func TestRequestUnits(t *testing.T) {
	f := func(kind openai.PassKind, body string, want int) {
		t.Helper()
		r := openai.AcquireChatRequest()
		defer r.Release()
		if e := r.ParseAs([]byte(body), kind); e != nil {
			t.Fatalf("%s: %v", body, e)
		}
		if r.Units != want {
			t.Errorf("%s: Units %d, want %d", body, r.Units, want)
		}
	}
	f(openai.PassSpeech, `{"model":"tts-1","input":"Hello","voice":"alloy"}`, 5)
	f(openai.PassSpeech, `{"model":"tts-1","input":"h\u00e9llo \"w\" 😀\ud83d\ude00","voice":"alloy"}`, 12)
	f(openai.PassSpeech, `{"model":"tts-1","input":"","voice":"alloy"}`, 0)
	f(openai.PassImages, `{"model":"dall-e-2","prompt":"a fox"}`, 1)
	f(openai.PassImages, `{"model":"dall-e-2","prompt":"a fox","n":null}`, 1)
	f(openai.PassImages, `{"model":"dall-e-2","prompt":"a fox","n":3}`, 3)
	f(openai.PassImages, `{"model":"dall-e-2","prompt":"a fox","n":0}`, 0)
	f(openai.PassImages, `{"model":"dall-e-2","prompt":"a fox","n":"2"}`, 0)
	f(openai.PassChat, `{"model":"gpt","messages":[{"role":"user","content":"Hi"}],"n":3}`, 0)
	f(openai.PassEmbeddings, `{"model":"e","input":"Hello"}`, 0)

	form := func(want int, fields ...string) {
		t.Helper()
		var r openai.FormRequest
		body := formBody(t, "XyZ", append([]string{"model", "dall-e-2"}, fields...)...)
		if e := r.ParseForm([]byte(`multipart/form-data; boundary=XyZ`), body); e != nil {
			t.Fatal(e)
		}
		if r.N != want {
			t.Errorf("form %q: N %d, want %d", fields, r.N, want)
		}
	}
	form(1)
	form(2, "n", "2")
	form(0, "n", "two")
	form(0, "n", "-1")
}

// TestCheckFile: an upload needs a file part (with a filename) of one of
// the names its route reads; a plain field of that name is not one.
func TestCheckFile(t *testing.T) {
	f := func(body []byte, names []string, wantParam, wantMsg string) {
		t.Helper()
		var r openai.FormRequest
		if e := r.ParseForm([]byte(`multipart/form-data; boundary=XyZ`), body); e != nil {
			t.Fatal(e)
		}
		e := r.CheckFile(names...)
		if wantParam == "" && e != nil || wantParam != "" && (e == nil || e.Status != 400 || e.Param != wantParam ||
			!strings.Contains(e.Message, wantMsg)) {
			t.Errorf("CheckFile(%q): %+v, want param %q, %q", names, e, wantParam, wantMsg)
		}
	}
	withFile := formBody(t, "XyZ", "model", "whisper-1") // its file part is named file
	f(withFile, []string{"file"}, "", "")
	f(withFile, []string{"image", "image[]"}, "image", "Missing required parameter: 'image'")
	f(formBody(t, "XyZ", "model", "whisper-1", "image", "not a file"), []string{"image"}, "image", "must be a file")
	noName := []byte("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n\r\nRIFF\r\n" +
		"--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--XyZ--\r\n")
	f(noName, []string{"file"}, "file", "must be a file") // an empty file name is no file, as mime/multipart reads it
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.SetBoundary("XyZ")
	fw, _ := w.CreateFormFile("image[]", "a.png")
	fw.Write([]byte("png"))
	w.WriteField("model", "gpt-image-1")
	w.Close()
	f(b.Bytes(), []string{"image", "image[]"}, "", "")
}
