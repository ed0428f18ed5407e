package proxy_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"image/png"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// checkDemoPNG decodes a demo image: an 8x8 PNG.
func checkDemoPNG(t *testing.T, b64 string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("image %q: %v", b64, err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() != 8 || img.Bounds().Dy() != 8 {
		t.Fatalf("not an 8x8 PNG: %v", err)
	}
	return b
}

// TestDemoMedia: a gateway whose only channel is the demo answers every
// images and audio call of the official client: PNGs that decode (the
// same for the same prompt, n of them, as b64_json or data: URLs), a WAV
// streamed whole with a header that matches its length, transcripts in
// every response_format with OpenAI's content types, and a streamed
// transcription's deltas and done event; each call has its access-log row,
// with tokens where the demo reports them.
func TestDemoMedia(t *testing.T) {
	tg := startGateway(t, demoChannel)
	client := mediaClient(tg, new(clientBodies))
	ctx := context.Background()
	png := func(name string) io.Reader {
		return openai.File(strings.NewReader("\x89PNG\r\n\x1a\nfake"), name, "image/png")
	}
	wav := func() io.Reader { return openai.File(strings.NewReader("RIFF0123456789"), "hello.wav", "audio/wav") }
	const transcript = "This is the demo transcript of hello.wav (14 bytes)."

	t.Run("images generations", func(t *testing.T) {
		gen := func(prompt string) *openai.ImagesResponse {
			r, err := client.Images.Generate(ctx, openai.ImageGenerateParams{Model: "demo", Prompt: prompt, N: openai.Int(2)})
			if err != nil || len(r.Data) != 2 || r.Usage.InputTokens < 1 || r.Usage.OutputTokens < 1 {
				t.Fatalf("%+v %v", r, err)
			}
			return r
		}
		a, b, c := gen("a red fox"), gen("a red fox"), gen("a blue fox")
		if !bytes.Equal(checkDemoPNG(t, a.Data[0].B64JSON), checkDemoPNG(t, b.Data[0].B64JSON)) ||
			a.Data[0].B64JSON == a.Data[1].B64JSON || a.Data[0].B64JSON == c.Data[0].B64JSON {
			t.Fatal("the images are not drawn from the prompt and their index")
		}
		r, err := client.Images.Generate(ctx, openai.ImageGenerateParams{Model: "demo", Prompt: "a fox",
			ResponseFormat: openai.ImageGenerateParamsResponseFormatURL})
		if err != nil || len(r.Data) != 1 || !strings.HasPrefix(r.Data[0].URL, "data:image/png;base64,") {
			t.Fatalf("%+v %v", r, err)
		}
		checkDemoPNG(t, strings.TrimPrefix(r.Data[0].URL, "data:image/png;base64,"))
		_, err = client.Images.Generate(ctx, openai.ImageGenerateParams{Model: "demo", Prompt: "a fox", N: openai.Int(5)})
		checkStatus(t, err, 400, "n")
	})
	t.Run("images edits and variations", func(t *testing.T) {
		r, err := client.Images.Edit(ctx, openai.ImageEditParams{Model: "demo", Prompt: "add a hat",
			Image: openai.ImageEditParamsImageUnion{OfFileArray: []io.Reader{png("a.png"), png("b.png")}}})
		if err != nil || len(r.Data) != 1 {
			t.Fatalf("%+v %v", r, err)
		}
		checkDemoPNG(t, r.Data[0].B64JSON)
		v, err := client.Images.NewVariation(ctx, openai.ImageNewVariationParams{Model: "demo", Image: png("a.png"), N: openai.Int(3)})
		if err != nil || len(v.Data) != 3 {
			t.Fatalf("%+v %v", v, err)
		}
		checkDemoPNG(t, v.Data[2].B64JSON)
		// A form without an image is OpenAI's 400, naming the part.
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		w.WriteField("model", "demo")
		w.WriteField("prompt", "add a hat")
		w.Close()
		resp, got := rawForm(t, tg, "/v1/images/edits", body.Bytes(), w.FormDataContentType())
		checkError(t, resp, got, 400, "")
		if !strings.Contains(string(got), `"param":"image"`) {
			t.Errorf("no image: %s", got)
		}
	})
	t.Run("speech", func(t *testing.T) {
		resp, err := client.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: "demo", Input: "Hello", Voice: alloy,
			ResponseFormat: openai.AudioSpeechNewParamsResponseFormatWAV})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.Header.Get("Content-Type") != "audio/wav" || resp.ContentLength != -1 {
			t.Fatalf("%v %q, length %d (want the stream relay's chunks)", err, resp.Header.Get("Content-Type"), resp.ContentLength)
		}
		le := binary.LittleEndian
		if len(b) != 44+4000 || string(b[:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data" ||
			int(le.Uint32(b[4:])) != len(b)-8 || int(le.Uint32(b[40:])) != len(b)-44 ||
			le.Uint32(b[24:]) != 8000 || le.Uint16(b[22:]) != 1 || le.Uint16(b[34:]) != 16 {
			t.Fatalf("not 0.25 s of 8 kHz mono 16-bit WAV: %d bytes, header %q", len(b), b[:min(44, len(b))])
		}
	})
	t.Run("transcriptions", func(t *testing.T) {
		r, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "demo", File: wav()})
		if err != nil || r.Text != transcript || r.Usage.Type != "tokens" || r.Usage.InputTokens < 1 || r.Usage.OutputTokens != 9 {
			t.Fatalf("%+v %v", r, err)
		}
		r, err = client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "demo", File: wav(),
			ResponseFormat: openai.AudioResponseFormatVerboseJSON, Language: openai.String("en"),
			TimestampGranularities: []string{"word", "segment"}})
		if err != nil || r.Text != transcript || r.Language != "en" || r.Duration != 3.6 || len(r.Segments) != 1 ||
			r.Segments[0].End != 3.6 || len(r.Words) != 9 || r.Words[8].Word != "bytes)." {
			t.Fatalf("%+v %v", r, err)
		}
		for format, want := range map[openai.AudioResponseFormat]string{
			openai.AudioResponseFormatText: transcript + "\n",
			openai.AudioResponseFormatSRT:  "1\n00:00:00,000 --> 00:00:03,600\n" + transcript + "\n\n",
			openai.AudioResponseFormatVTT:  "WEBVTT\n\n00:00:00.000 --> 00:00:03.600\n" + transcript + "\n\n",
		} {
			var body []byte
			var resp *http.Response
			_, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "demo", File: wav(),
				ResponseFormat: format}, option.WithResponseBodyInto(&body), option.WithResponseInto(&resp))
			if err != nil || string(body) != want || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Errorf("%s: %q %q %v", format, resp.Header.Get("Content-Type"), body, err)
			}
		}
	})
	t.Run("transcriptions stream", func(t *testing.T) {
		s := client.Audio.Transcriptions.NewStreaming(ctx, openai.AudioTranscriptionNewParams{Model: "demo", File: wav()})
		var deltas []string
		var done openai.TranscriptionTextDoneEvent
		for s.Next() {
			switch e := s.Current(); e.Type {
			case "transcript.text.delta":
				deltas = append(deltas, e.AsTranscriptTextDelta().Delta)
			case "transcript.text.done":
				done = e.AsTranscriptTextDone()
			}
		}
		if s.Err() != nil || len(deltas) != 9 || strings.Join(deltas, "") != transcript || done.Text != transcript ||
			done.Usage.OutputTokens != 9 {
			t.Fatalf("%q %+v %v", deltas, done, s.Err())
		}
	})
	t.Run("translations", func(t *testing.T) {
		r, err := client.Audio.Translations.New(ctx, openai.AudioTranslationNewParams{Model: "demo", File: wav()})
		if err != nil || r.Text != "This is the demo translation of hello.wav (14 bytes)." {
			t.Fatalf("%+v %v", r, err)
		}
		var v struct {
			Task, Language, Text string
			Segments             []struct{ Text string }
		}
		_, err = client.Audio.Translations.New(ctx, openai.AudioTranslationNewParams{Model: "demo", File: wav(),
			ResponseFormat: openai.AudioTranslationNewParamsResponseFormatVerboseJSON}, option.WithResponseBodyInto(&v))
		if err != nil || v.Task != "translate" || v.Language != "english" || len(v.Segments) != 1 || v.Segments[0].Text != " "+r.Text {
			t.Fatalf("%+v %v", v, err)
		}
	})
	t.Run("access log", func(t *testing.T) {
		waitFor(t, "the demo's media rows", func() bool {
			seen := map[string]bool{}
			for _, l := range tg.accessLines(t) {
				if l["status"] == 200.0 && l["channel"] == "demo" {
					e, tokens := l["endpoint"].(string), l["input_tokens"]
					seen[e] = seen[e] || e == "audio.speech" || tokens != nil && tokens.(float64) > 0
				}
			}
			return len(seen) == 6 && !slices.Contains(slices.Collect(maps.Values(seen)), false)
		})
	})
}

// checkStatus checks an openai-go error's status and param.
func checkStatus(t *testing.T, err error, status int, param string) {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) || e.StatusCode != status || e.Param != param {
		t.Errorf("error %v, want %d naming %s", err, status, param)
	}
}
