package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestLargeRequestHeaders: requests with several KiB of headers (big
// cookies, tracing baggage) are served, streamed or not; only headers far
// over any sane size are refused, with 431.
func TestLargeRequestHeaders(t *testing.T) {
	up := newMock(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	send := func(size int) *http.Response {
		req, _ := http.NewRequest("POST", tg.url+"/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`))
		req.Header.Set("Authorization", "Bearer "+clientKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", "session="+strings.Repeat("a", size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, size := range []int{4 << 10, 8 << 10, 12 << 10} {
		if resp := send(size); resp.StatusCode != 200 {
			t.Errorf("%d-byte cookie: status %d", size, resp.StatusCode)
		}
	}
	if resp := send(20 << 10); resp.StatusCode != 431 {
		t.Errorf("20 KiB cookie: status %d, want 431", resp.StatusCode)
	}
}
