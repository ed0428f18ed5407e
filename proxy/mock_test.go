package proxy_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mockUpstream is an OpenAI-compatible provider on a loopback socket. Its
// answers are the provider's own bytes (fixtures in testdata/); a test picks
// the behaviour.
type mockUpstream struct {
	srv    *httptest.Server
	hits   atomic.Int64
	mu     sync.Mutex
	last   recorded
	handle func(w http.ResponseWriter, r *http.Request, body []byte)
}

type recorded struct {
	path   string
	header http.Header
	body   []byte
}

func newMock(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *mockUpstream {
	t.Helper()
	m := &mockUpstream{handle: handle}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.hits.Add(1)
		m.mu.Lock()
		m.last = recorded{r.URL.Path, r.Header.Clone(), body}
		m.mu.Unlock()
		m.handle(w, r, body)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *mockUpstream) baseURL() string { return m.srv.URL + "/v1" }

func (m *mockUpstream) lastRequest() recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// events splits an SSE fixture into its events, blank lines included.
func events(stream []byte) [][]byte {
	var out [][]byte
	for _, ev := range strings.SplitAfter(string(stream), "\n\n") {
		if ev != "" {
			out = append(out, []byte(ev))
		}
	}
	return out
}

// jsonReply answers every request with status and body.
func jsonReply(status int, body []byte) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}
}

// streamReply answers with the SSE events, flushed one by one, waiting
// delay before each. Without stream_options.include_usage in the request it
// sends what OpenAI sends then: no "usage" fields and no usage chunk.
func streamReply(evs [][]byte, delay time.Duration) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		withUsage := bytes.Contains(body, []byte(`"include_usage":true`))
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(200)
		for _, ev := range evs {
			if !withUsage {
				if bytes.Contains(ev, []byte(`"choices":[]`)) {
					continue
				}
				ev = bytes.ReplaceAll(ev, []byte(`,"usage":null`), nil)
			}
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
			if _, err := w.Write(ev); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}
