package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
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

// TestLargeHeadersOnKeptConnection: a connection reads requests into a
// 4 KiB buffer, and one whose headers outgrow it is served on by a server
// with a 16 KiB buffer, that request first: on one kept-alive connection,
// requests with small and large headers, whole or streamed, alternate.
// A large-headed request pipelined behind another gets 431: its start was
// read before its head could be recorded.
func TestLargeHeadersOnKeptConnection(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	up := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range evs {
			w.Write(ev)
		}
	})
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	request := func(cookie int, stream bool) []byte {
		body := fmt.Sprintf(`{"model":"gpt-4o-mini","stream":%t,"messages":[{"role":"user","content":"Hi"}]}`, stream)
		return fmt.Appendf(nil, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Cookie: session=%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			clientKey, strings.Repeat("a", cookie), len(body), body)
	}
	answer := func(what string) (int, string) {
		t.Helper()
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return resp.StatusCode, string(b)
	}
	for i, c := range []struct {
		cookie int
		stream bool
	}{{10, false}, {12 << 10, false}, {10, true}, {3 << 10, false}, {12 << 10, true}, {10, false}} {
		what := fmt.Sprintf("request %d (%d-byte cookie, stream %t)", i, c.cookie, c.stream)
		if _, err := conn.Write(request(c.cookie, c.stream)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		status, body := answer(what)
		if status != 200 {
			t.Fatalf("%s: status %d: %s", what, status, body)
		}
		if c.stream && !strings.Contains(body, "data: [DONE]") {
			t.Errorf("%s: stream without its end: %q", what, body)
		}
	}

	// Pipelined on a new connection: the second request's start comes in
	// the first one's read.
	conn2, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	r = bufio.NewReader(conn2)
	if _, err := conn2.Write(append(request(10, false), request(6<<10, false)...)); err != nil {
		t.Fatal(err)
	}
	if status, body := answer("pipelined first"); status != 200 {
		t.Errorf("pipelined first: status %d: %s", status, body)
	}
	if status, body := answer("pipelined second"); status != 431 || !strings.Contains(body, "request_header_fields_too_large") {
		t.Errorf("pipelined second: status %d, want 431: %s", status, body)
	}
}

// TestShutdownClosesMovedConnection: a kept-alive connection that moved to
// the large-header server and then went idle is closed by Shutdown, which
// returns at once, with none of the connection's goroutines left.
func TestShutdownClosesMovedConnection(t *testing.T) {
	up := newMock(t, func(http.ResponseWriter, *http.Request, []byte) {})
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	waitFor(t, "the gateway serving", func() bool {
		resp, err := http.Get(tg.url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: session=%s\r\n\r\n", strings.Repeat("a", 12<<10))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("12 KiB of headers: status %d, connection close %t", resp.StatusCode, resp.Close)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := tg.g.Shutdown(ctx); err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("Shutdown with a moved idle connection: %v after %v", err, time.Since(start))
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := r.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the moved connection is still open after Shutdown: read %d, %v", n, err)
	}
	waitFor(t, fmt.Sprintf("goroutines back to %d", before), func() bool { return runtime.NumGoroutine() <= before })
}
