package proxy_test

import (
	"bufio"
	"bytes"
	"fmt"
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

	"github.com/rosetta-gateway/rosetta/proxy"
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
	m := newUnstartedMock(t, handle)
	m.srv.Start()
	return m
}

// mockStart starts a mock upstream: newMock or newTLSMock.
type mockStart func(testing.TB, func(http.ResponseWriter, *http.Request, []byte)) *mockUpstream

// newTLSMock is newMock serving https with a self-signed certificate
// (httptest's), which the gateways the test starts trust.
func newTLSMock(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *mockUpstream {
	t.Helper()
	m := newUnstartedMock(t, handle)
	m.srv.StartTLS()
	proxy.TrustUpstreamCert(t, m.srv.Certificate())
	return m
}

// newUnstartedMock makes the mock's server, not started yet.
func newUnstartedMock(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *mockUpstream {
	m := &mockUpstream{handle: handle}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

// rawUpstream serves one connection on a loopback port with serve, after
// reading its request: for upstream behaviour net/http cannot produce, such
// as several HTTP chunks in one TCP write. It returns the port's address.
func rawUpstream(t *testing.T, serve func(conn net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		serve(conn)
	}()
	return ln.Addr().String()
}

// rawStreamHead is the head of a streamed upstream response.
const rawStreamHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// chunks frames each event as one HTTP chunk.
func chunks(evs [][]byte) []byte {
	var b []byte
	for _, ev := range evs {
		b = append(b, fmt.Sprintf("%x\r\n%s\r\n", len(ev), ev)...)
	}
	return b
}

// rawStreamRequest posts body to the gateway's chat endpoint over a
// connection of its own and reads the response head: the reader is left at
// the raw chunked body.
func rawStreamRequest(t *testing.T, tg *testGateway, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", clientKey, len(body), body)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 200 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		conn.Close()
		t.Fatalf("response %v, %v", resp, err)
	}
	return conn, r
}
