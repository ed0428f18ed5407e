package proxy_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// transcriptStream is a streamed gpt-4o-transcribe answer, in the pieces
// the mock writes: the done event comes in three, its usage split.
var transcriptStream = []string{
	"data: {\"type\":\"transcript.text.delta\",\"delta\":\"Hello\"}\n\n",
	"data: {\"type\":\"transcript.text.delta\",\"delta\":\" there.\"}\n\ndata: {\"type\":\"transcript.text.done\",\"text\":\"Hello there.\",",
	"\"usage\":{\"type\":\"tokens\",\"input_tokens\":14,\"input_token_details\":{\"text_tokens\":0,\"audio_tokens\":14},",
	"\"output_tokens\":45,\"total_tokens\":59}}\n\n",
}

// unitsUpstream answers as OpenAI does: whisper's transcriptions with
// their duration, gpt-4o-transcribe's streamed with tokens, translations
// without usage, speech, images; an edit asking for 9 images is refused.
func unitsUpstream(t *testing.T) *mockUpstream {
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.URL.Path == "/v1/audio/transcriptions" && bytes.Contains(body, []byte("name=\"stream\"\r\n\r\ntrue")):
			w.Header().Set("Content-Type", "text/event-stream")
			for _, piece := range transcriptStream {
				w.Write([]byte(piece))
				w.(http.Flusher).Flush()
				time.Sleep(5 * time.Millisecond)
			}
		case r.URL.Path == "/v1/audio/transcriptions":
			jsonReply(200, []byte(`{"text":"Hello there.","usage":{"type":"duration","seconds":3.2}}`))(w, r, body)
		case r.URL.Path == "/v1/audio/translations":
			jsonReply(200, []byte(`{"text":"Hello there."}`))(w, r, body)
		case r.URL.Path == "/v1/audio/speech":
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Write([]byte(speechAudio))
		case bytes.Contains(body, []byte("name=\"n\"\r\n\r\n9\r\n")):
			jsonReply(400, []byte(`{"error":{"message":"n must be at most 8","type":"invalid_request_error","param":"n"}}`))(w, r, body)
		default:
			jsonReply(200, []byte(imagesAnswer))(w, r, body)
		}
	})
}

// unitsForm is an upload with a file part (named image on the images
// routes, else file) and the given fields.
func unitsForm(t *testing.T, path string, fields ...string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	field := "file"
	if strings.HasPrefix(path, "/v1/images/") {
		field = "image"
	}
	f, _ := w.CreateFormFile(field, "a.wav")
	f.Write([]byte("RIFF0123456789"))
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// TestUsageUnits: usage rows count what each endpoint is billed by besides
// tokens: whisper's seconds (rounded up) as it reports them, the
// characters of a speech's input, the images asked for, Cohere's search
// units; a streamed transcription's tokens come from its done event,
// relayed to the client byte for byte; a refused request counts no
// units, an answer without usage none.
func TestUsageUnits(t *testing.T) {
	up := unitsUpstream(t)
	rows := &rowSink{}
	tg := startGatewayWith(t, mediaChannel("up", up, "")+cohereChannel("co", cohereMock(t), ""), proxy.Options{Usage: rows})
	want := map[string]store.Usage{} // by request id: the fields checked
	call := func(w store.Usage, status int, resp *http.Response, body []byte) []byte {
		t.Helper()
		if resp.StatusCode != status {
			t.Fatalf("%s: %d %s", w.Endpoint, resp.StatusCode, body)
		}
		want[resp.Header.Get("X-Request-Id")] = w
		return body
	}
	form := func(path string, fields ...string) (*http.Response, []byte) {
		body, ct := unitsForm(t, path, fields...)
		return rawForm(t, tg, path, body, ct)
	}
	json := func(path, body string) (*http.Response, []byte) { return tg.do(t, "POST", path, clientKey, body) }

	r, b := form("/v1/audio/transcriptions", "model", "gpt-ears")
	call(store.Usage{Endpoint: "audio.transcriptions", Units: 4, Unit: store.UnitSeconds}, 200, r, b)
	r, b = form("/v1/audio/transcriptions", "model", "gpt-ears", "stream", "true")
	got := call(store.Usage{Endpoint: "audio.transcriptions", Input: 14, Output: 45}, 200, r, b)
	if string(got) != strings.Join(transcriptStream, "") {
		t.Errorf("streamed transcript:\n%q\nwant\n%q", got, strings.Join(transcriptStream, ""))
	}
	r, b = form("/v1/audio/translations", "model", "gpt-ears")
	call(store.Usage{Endpoint: "audio.translations"}, 200, r, b)
	r, b = json("/v1/audio/speech", `{"model":"gpt-voice","input":"Gr\u00fc\u00df dich 👋","voice":"alloy"}`)
	call(store.Usage{Endpoint: "audio.speech", Units: 11, Unit: store.UnitCharacters}, 200, r, b)
	r, b = json("/v1/images/generations", `{"model":"gpt-img","prompt":"a fox","n":3}`)
	call(store.Usage{Endpoint: "images.generations", Input: 12, Output: 34, Units: 3, Unit: store.UnitImages}, 200, r, b)
	r, b = form("/v1/images/edits", "model", "gpt-img", "prompt", "a fox", "n", "2")
	call(store.Usage{Endpoint: "images.edits", Input: 12, Output: 34, Units: 2, Unit: store.UnitImages}, 200, r, b)
	r, b = form("/v1/images/variations", "model", "gpt-img")
	call(store.Usage{Endpoint: "images.variations", Input: 12, Output: 34, Units: 1, Unit: store.UnitImages}, 200, r, b)
	r, b = form("/v1/images/edits", "model", "gpt-img", "prompt", "a fox", "n", "9")
	call(store.Usage{Endpoint: "images.edits"}, 400, r, b)
	r, b = json("/v1/rerank", rerankBody)
	call(store.Usage{Endpoint: "rerank", Input: 27, Units: 1, Unit: store.UnitSearchUnits}, 200, r, b)

	waitFor(t, "the usage rows", func() bool { return len(rows.all()) == len(want) })
	for _, row := range rows.all() {
		w, ok := want[row.RequestID]
		got := store.Usage{Endpoint: row.Endpoint, Input: row.Input, Output: row.Output, Units: row.Units, Unit: row.Unit}
		if !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("row %s: %+v, want %+v", row.RequestID, got, w)
		}
	}
}
