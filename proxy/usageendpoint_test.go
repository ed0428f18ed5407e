package proxy_test

import (
	"bytes"
	"mime/multipart"
	"testing"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// demoForm is a multipart upload to the demo: a file part, the model and a
// prompt.
func demoForm(t *testing.T, field, name string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	f, err := w.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("RIFF0123456789"))
	w.WriteField("model", "demo")
	w.WriteField("prompt", "a fox")
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// TestUsageEndpoints: each request's usage row names its endpoint, the
// same whatever the client's style (Anthropic's messages and Gemini's
// generateContent are chat, embedContent embeddings), also when it is
// refused before routing; token counts make no row. The endpoints named are
// those UsageEndpoints lists for the console (realtime's row is checked by
// TestRealtimeSession).
func TestUsageEndpoints(t *testing.T) {
	rows := &rowSink{}
	tg := startGatewayWith(t, demoChannel, proxy.Options{Usage: rows})
	want := map[string]string{} // request id → endpoint
	json := func(endpoint, path, body string) {
		t.Helper()
		resp, got := tg.do(t, "POST", path, clientKey, body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, got)
		}
		want[resp.Header.Get("X-Request-Id")] = endpoint
	}
	form := func(endpoint, path, field, name string) {
		t.Helper()
		body, ct := demoForm(t, field, name)
		resp, got := rawForm(t, tg, path, body, ct)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, got)
		}
		want[resp.Header.Get("X-Request-Id")] = endpoint
	}
	json("chat", "/v1/chat/completions", demoBody)
	json("completions", "/v1/completions", `{"model":"demo","prompt":"Hi"}`)
	json("embeddings", "/v1/embeddings", `{"model":"demo","input":"Hi"}`)
	json("rerank", "/v1/rerank", `{"model":"demo","query":"a","documents":["a","b"]}`)
	json("images.generations", "/v1/images/generations", `{"model":"demo","prompt":"a fox"}`)
	json("audio.speech", "/v1/audio/speech", `{"model":"demo","input":"Hello","voice":"alloy"}`)
	form("images.edits", "/v1/images/edits", "image", "a.png")
	form("images.variations", "/v1/images/variations", "image", "a.png")
	form("audio.transcriptions", "/v1/audio/transcriptions", "file", "a.wav")
	form("audio.translations", "/v1/audio/translations", "file", "a.wav")
	json("responses", "/v1/responses", `{"model":"demo","input":"Hi"}`)

	anthropic := map[string]string{"x-api-key": clientKey, "anthropic-version": "2023-06-01"}
	resp, got := tg.send(t, "POST", "/v1/messages", anthropic,
		`{"model":"demo","max_tokens":20,"messages":[{"role":"user","content":"Hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("messages: %d %s", resp.StatusCode, got)
	}
	want[resp.Header.Get("X-Request-Id")] = "chat"
	resp, _ = tg.geminiPost(t, "demo:generateContent", `{"contents":[{"parts":[{"text":"Hi"}]}]}`)
	want[resp.Header.Get("X-Request-Id")] = "chat"
	resp, _ = tg.geminiPost(t, "demo:embedContent", `{"content":{"parts":[{"text":"Hi"}]}}`)
	want[resp.Header.Get("X-Request-Id")] = "embeddings"
	resp, _ = tg.do(t, "POST", "/v1/embeddings", clientKey, `{"model":`)
	if resp.StatusCode != 400 {
		t.Fatalf("bad JSON answered %d", resp.StatusCode)
	}
	want[resp.Header.Get("X-Request-Id")] = "embeddings"
	resp, _ = tg.send(t, "POST", "/v1/messages/count_tokens", anthropic,
		`{"model":"demo","messages":[{"role":"user","content":"Hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("count_tokens answered %d", resp.StatusCode)
	}

	waitFor(t, "the usage rows", func() bool { return len(rows.all()) >= len(want) })
	byID := map[string]string{}
	for _, r := range rows.all() {
		byID[r.RequestID] = r.Endpoint
	}
	for id, e := range want {
		if byID[id] != e {
			t.Errorf("request %s: endpoint %q, want %q", id, byID[id], e)
		}
	}
	if len(byID) != len(want) {
		t.Errorf("%d rows, want %d (none for count_tokens): %v", len(byID), len(want), byID)
	}
	named := map[string]bool{"realtime": true}
	for _, e := range want {
		named[e] = true
	}
	listed := proxy.UsageEndpoints()
	if len(listed) != len(named) {
		t.Errorf("UsageEndpoints %v, rows name %v", listed, named)
	}
	for _, e := range listed {
		if !named[e] {
			t.Errorf("UsageEndpoints lists %q, which no row names", e)
		}
	}
}
