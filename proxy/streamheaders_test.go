package proxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// setOpenAIHeaders sets proxy.OpenAIHeaders on an upstream's answer to r,
// its X-Request-Id "up-" and the one r came with.
func setOpenAIHeaders(w http.ResponseWriter, r *http.Request) {
	for _, h := range proxy.OpenAIHeaders {
		w.Header().Set(h[0], h[1])
	}
	w.Header().Set("X-Request-Id", "up-"+r.Header.Get("X-Request-Id"))
}

// TestStreamHeadersParked: a stream's response headers, the client's and the
// upstream's, are parked while it runs and their storage taken by the
// headers of later requests (streampark.go). Over kept-alive connections
// at once, streams and whole answers alternating, every response has its
// own headers and no other's: its request id, the upstream's id for it,
// the upstream's passed headers, and a stream's own headers on streams
// alone.
func TestStreamHeadersParked(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	stream := streamReply(evs, time.Millisecond)
	up := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		setOpenAIHeaders(w, r)
		if strings.Contains(string(body), `"stream":true`) {
			stream(w, r, body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	const conns, requests = 4, 8
	var wg sync.WaitGroup
	for c := range conns {
		wg.Go(func() {
			conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			r := bufio.NewReader(conn)
			for i := range requests {
				if err := checkOwnHeaders(conn, r, fmt.Sprintf("c%d-%d", c, i), (c+i)%2 == 0); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// checkOwnHeaders sends a chat request with request id id on conn and
// checks the headers of its answer, read whole from r.
func checkOwnHeaders(conn net.Conn, r *bufio.Reader, id string, stream bool) error {
	body := fmt.Sprintf(`{"model":"gpt-4o-mini","stream":%t,"messages":[{"role":"user","content":"Hi"}]}`, stream)
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nX-Request-Id: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", clientKey, id, len(body), body)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return fmt.Errorf("%s: %v", id, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("%s: status %d, %v: %s", id, resp.StatusCode, err, b)
	}
	h := resp.Header
	want := map[string]string{"X-Request-Id": id, "X-Upstream-Request-Id": "up-" + id,
		"Openai-Processing-Ms": "412", "X-Ratelimit-Remaining-Tokens": "149999513", "X-Ratelimit-Reset-Requests": "2ms",
		"Content-Type": "application/json", "Cache-Control": "", "X-Accel-Buffering": ""}
	if stream {
		want["Content-Type"], want["Cache-Control"], want["X-Accel-Buffering"] = "text/event-stream", "no-cache", "no"
	}
	for name, v := range want {
		if got := strings.Join(h.Values(name), ", "); got != v {
			return fmt.Errorf("%s (stream: %t): %s is %q, want %q; headers %v", id, stream, name, got, v, h)
		}
	}
	if stream && !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		return fmt.Errorf("%s: the stream ends %q", id, b[max(0, len(b)-40):])
	}
	return nil
}
