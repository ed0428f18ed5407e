package proxy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const (
	imagesAnswer     = `{"created":1713833628,"data":[{"b64_json":"iVBORw0KGgo="}],"usage":{"input_tokens":12,"output_tokens":34,"total_tokens":46}}`
	transcriptAnswer = `{"text":"Hello there.","usage":{"type":"tokens","input_tokens":5,"output_tokens":3,"total_tokens":8}}`
	speechAudio      = "ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00audio-bytes"
)

// mediaUpstream answers the images and audio paths as OpenAI does.
func mediaUpstream(t *testing.T) *mockUpstream {
	t.Helper()
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.URL.Path {
		case "/v1/images/generations", "/v1/images/edits", "/v1/images/variations":
			jsonReply(200, []byte(imagesAnswer))(w, r, body)
		case "/v1/audio/speech":
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Write([]byte(speechAudio))
		case "/v1/audio/transcriptions", "/v1/audio/translations":
			if bytes.Contains(body, []byte("name=\"response_format\"\r\n\r\nsrt\r\n")) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Write([]byte("1\n00:00:00,000 --> 00:00:01,000\nHello there.\n\n"))
				return
			}
			jsonReply(200, []byte(transcriptAnswer))(w, r, body)
		default:
			jsonReply(404, []byte(`{"error":{"message":"unknown path","type":"invalid_request_error"}}`))(w, r, body)
		}
	})
}

// clientBodies records the bodies an openai-go client sends.
type clientBodies struct {
	mu   sync.Mutex
	last []byte
}

func (c *clientBodies) middleware(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	c.mu.Lock()
	c.last = b
	c.mu.Unlock()
	return next(r)
}

func (c *clientBodies) get() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func mediaClient(tg *testGateway, rec *clientBodies) openai.Client {
	return openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0),
		option.WithMiddleware(rec.middleware))
}

// mediaChannel maps the public names of the media tests to the upstream's.
func mediaChannel(name string, up *mockUpstream, extra string) string {
	return channel(name, up.baseURL(), "model_map: {gpt-img: dall-e-2, gpt-voice: tts-1, gpt-ears: whisper-1}"+extra)
}

// TestMedia drives every images and audio call of the official client
// through a channel that maps the names: the upstream gets the exact path,
// its own key, and the client's body but the model (a form's model part
// alone rewritten, its file bytes untouched); the client gets the
// upstream's answer with its content type, and tokens are counted.
func TestMedia(t *testing.T) {
	up := mediaUpstream(t)
	tg := startGateway(t, mediaChannel("up", up, ""))
	rec := new(clientBodies)
	client := mediaClient(tg, rec)
	ctx := context.Background()
	sent := func(t *testing.T, path, before, after string) {
		t.Helper()
		got := up.lastRequest()
		if got.path != path {
			t.Fatalf("upstream path %s, want %s", got.path, path)
		}
		checkUpstreamKey(t, got.header)
		want := bytes.Replace(rec.get(), []byte(before), []byte(after), 1)
		if !bytes.Equal(got.body, want) || bytes.Equal(got.body, rec.get()) {
			t.Fatalf("upstream body\n%q\nwant\n%q", got.body, want)
		}
		if ct := got.header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") && !strings.Contains(string(got.body), ct[strings.Index(ct, "=")+1:]) {
			t.Fatalf("upstream Content-Type %q does not name the body's boundary", ct)
		}
	}
	formModel := func(m string) string { return "name=\"model\"\r\n\r\n" + m + "\r\n" }
	file := func() io.Reader {
		return openai.File(strings.NewReader("RIFF\x00\x01fake-bytes"), "a.wav", "audio/wav")
	}

	t.Run("images generations", func(t *testing.T) {
		r, err := client.Images.Generate(ctx, openai.ImageGenerateParams{Model: "gpt-img", Prompt: "a red fox"})
		if err != nil || len(r.Data) != 1 || r.Data[0].B64JSON != "iVBORw0KGgo=" || r.Usage.InputTokens != 12 {
			t.Fatalf("%+v %v", r, err)
		}
		sent(t, "/v1/images/generations", `"model":"gpt-img"`, `"model":"dall-e-2"`)
	})
	t.Run("images edits", func(t *testing.T) {
		img := openai.File(strings.NewReader("\x89PNG\r\n\x1a\nfake"), "a.png", "image/png")
		r, err := client.Images.Edit(ctx, openai.ImageEditParams{Model: "gpt-img", Prompt: "add a hat",
			Image: openai.ImageEditParamsImageUnion{OfFileArray: []io.Reader{img, openai.File(strings.NewReader("b"), "b.png", "image/png")}}})
		if err != nil || len(r.Data) != 1 {
			t.Fatalf("%+v %v", r, err)
		}
		sent(t, "/v1/images/edits", formModel("gpt-img"), formModel("dall-e-2"))
	})
	t.Run("images variations", func(t *testing.T) {
		img := openai.File(strings.NewReader("\x89PNG\r\n\x1a\nfake"), "a.png", "image/png")
		r, err := client.Images.NewVariation(ctx, openai.ImageNewVariationParams{Model: "gpt-img", Image: img})
		if err != nil || len(r.Data) != 1 {
			t.Fatalf("%+v %v", r, err)
		}
		sent(t, "/v1/images/variations", formModel("gpt-img"), formModel("dall-e-2"))
	})
	t.Run("speech", func(t *testing.T) {
		resp, err := client.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: "gpt-voice", Input: "Hello", Voice: alloy})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if string(b) != speechAudio || resp.Header.Get("Content-Type") != "audio/mpeg" {
			t.Fatalf("%q %q", resp.Header.Get("Content-Type"), b)
		}
		sent(t, "/v1/audio/speech", `"model":"gpt-voice"`, `"model":"tts-1"`)
	})
	t.Run("transcriptions", func(t *testing.T) {
		r, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "gpt-ears", File: file(),
			Language: openai.String("en"), TimestampGranularities: []string{"word", "segment"}})
		if err != nil || r.Text != "Hello there." || r.Usage.InputTokens != 5 {
			t.Fatalf("%+v %v", r, err)
		}
		sent(t, "/v1/audio/transcriptions", formModel("gpt-ears"), formModel("whisper-1"))
	})
	t.Run("transcriptions srt", func(t *testing.T) {
		var srt []byte
		_, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "gpt-ears", File: file(),
			ResponseFormat: openai.AudioResponseFormatSRT}, option.WithResponseBodyInto(&srt))
		if err != nil || !strings.Contains(string(srt), "--> 00:00:01,000") {
			t.Fatalf("%q %v", srt, err)
		}
		sent(t, "/v1/audio/transcriptions", formModel("gpt-ears"), formModel("whisper-1"))
	})
	t.Run("translations", func(t *testing.T) {
		r, err := client.Audio.Translations.New(ctx, openai.AudioTranslationNewParams{Model: "gpt-ears", File: file()})
		if err != nil || r.Text != "Hello there." {
			t.Fatalf("%+v %v", r, err)
		}
		sent(t, "/v1/audio/translations", formModel("gpt-ears"), formModel("whisper-1"))
	})
	t.Run("access log", func(t *testing.T) {
		waitFor(t, "the media requests' access-log lines", func() bool {
			seen := map[string]bool{}
			for _, l := range tg.accessLines(t) {
				if l["status"] == 200.0 && l["channel"] == "up" {
					seen[l["endpoint"].(string)] = seen[l["endpoint"].(string)] || l["input_tokens"] == 12.0 || l["input_tokens"] == 5.0 ||
						l["endpoint"] == "audio.speech"
				}
			}
			return seen["images.generations"] && seen["images.edits"] && seen["audio.transcriptions"] && seen["audio.speech"]
		})
	})
}

// rawForm posts a multipart body to the gateway with Content-Type ct.
func rawForm(t *testing.T, tg *testGateway, path string, body []byte, ct string) (*http.Response, []byte) {
	t.Helper()
	return tg.send(t, "POST", path, map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": ct}, string(body))
}

// TestMediaStreamsSpeech: the speech audio reaches the client as the
// upstream sends it: the client reads the first bytes while the upstream
// still holds the rest.
func TestMediaStreamsSpeech(t *testing.T) {
	read := make(chan struct{})
	up := newMock(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Write([]byte("RIFF-first"))
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-time.After(10 * time.Second):
			return // the client never saw the first bytes: the test fails on its side
		}
		w.Write([]byte("-rest"))
	})
	tg := startGateway(t, mediaChannel("up", up, ""))
	client := mediaClient(tg, new(clientBodies))
	resp, err := client.Audio.Speech.New(context.Background(), openai.AudioSpeechNewParams{Model: "gpt-voice", Input: "Hi", Voice: alloy})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("RIFF-first"))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "RIFF-first" {
		t.Fatalf("%q %v", first, err)
	}
	close(read)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "-rest" || resp.Header.Get("Content-Type") != "audio/wav" {
		t.Fatalf("%q %v %q", rest, err, resp.Header.Get("Content-Type"))
	}
}

// TestMediaRouting: a form request fails over from a channel that answers
// 500; a model only an anthropic channel serves is a 503 naming the
// endpoint family; a form without a model part, or a broken one, is a 400
// and no upstream is called.
func TestMediaRouting(t *testing.T) {
	bad := newMock(t, jsonReply(500, []byte(`{"error":{"message":"boom","type":"server_error"}}`)))
	good := mediaUpstream(t)
	tg := startGateway(t, mediaChannel("bad", bad, ", priority: 0")+mediaChannel("good", good, ", priority: 1")+
		"  - {name: claude, type: anthropic, base_url: \""+bad.srv.URL+"\", api_keys: [k], models: [gpt-claude]}\n")
	rec := new(clientBodies)
	client := mediaClient(tg, rec)
	r, err := client.Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{Model: "gpt-ears",
		File: openai.File(strings.NewReader("RIFF"), "a.wav", "audio/wav")})
	if err != nil || r.Text != "Hello there." || bad.hits.Load() != 1 || good.hits.Load() != 1 {
		t.Fatalf("%+v %v (bad %d, good %d)", r, err, bad.hits.Load(), good.hits.Load())
	}
	form, ct := rec.get(), good.lastRequest().header.Get("Content-Type")
	hits := bad.hits.Load() + good.hits.Load()

	_, err = client.Images.Generate(context.Background(), openai.ImageGenerateParams{Model: "gpt-claude", Prompt: "a fox"})
	checkSDKError(t, err, 503, "endpoint_not_served", "images")
	_, err = client.Audio.Speech.New(context.Background(), openai.AudioSpeechNewParams{Model: "gpt-claude", Input: "Hi", Voice: alloy})
	checkSDKError(t, err, 503, "endpoint_not_served", "audio")

	noModel := bytes.Replace(form, []byte(`name="model"`), []byte(`name="modal"`), 1)
	resp, got := rawForm(t, tg, "/v1/audio/transcriptions", noModel, ct)
	checkError(t, resp, got, 400, "")
	if !strings.Contains(string(got), `"param":"model"`) {
		t.Errorf("missing model part: %s", got)
	}
	resp, got = rawForm(t, tg, "/v1/audio/transcriptions", form[:len(form)-8], ct)
	checkError(t, resp, got, 400, "")
	resp, got = rawForm(t, tg, "/v1/images/edits", form, "multipart/form-data")
	checkError(t, resp, got, 400, "")
	if n := bad.hits.Load() + good.hits.Load(); n != hits {
		t.Fatalf("upstreams called %d more times", n-hits)
	}
}

// checkSDKError checks an openai-go error's status, code and message.
func checkSDKError(t *testing.T, err error, status int, code, mention string) {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) || e.StatusCode != status || e.Code != code || !strings.Contains(e.Message, mention) {
		t.Errorf("error %v, want %d %s naming %s", err, status, code, mention)
	}
}

var alloy = openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}
