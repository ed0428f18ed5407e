package main

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The mock on net/http (-mock nethttp): the answers of the fasthttp one,
// byte for byte but for the order of the header lines, which net/http
// writes as it does for any handler (sorted by name, then Date and
// Content-Length or Transfer-Encoding) where fasthttp writes Server, Date,
// Content-Type and Content-Length first, then the rest as they were set.
// A stream's events are each written and flushed (http.Flusher): one chunk
// per event.

// mockHeaderValues are mockHeaders as net/http's header values, made once:
// the handler puts the same slices in every answer, which net/http only
// reads.
var mockHeaderValues = func() map[string][]string {
	h := make(map[string][]string, len(mockHeaders))
	for _, kv := range mockHeaders {
		h[kv[0]] = []string{kv[1]}
	}
	return h
}()

var (
	mockJSONValue       = []string{mockJSON}
	mockSSEValue        = []string{mockSSE}
	mockNoCacheValue    = []string{mockNoCache}
	mockServerNameValue = []string{mockServerName}
)

// mockBodies holds the buffers requests are read into.
var mockBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// serveNetHTTP serves the mock on net/http.
func (m *mock) serveNetHTTP() {
	m.http = &http.Server{
		Handler:     http.HandlerFunc(m.serveHTTP),
		ReadTimeout: time.Minute,
		IdleTimeout: time.Minute,
	}
	go m.http.Serve(m.ln) //nolint:errcheck // ends with Close
}

// serveHTTP is the net/http server's handler.
func (m *mock) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body := mockBodies.Get().(*bytes.Buffer)
	defer mockBodies.Put(body)
	body.Reset()
	if _, err := body.ReadFrom(r.Body); err != nil {
		return // the client went away
	}
	auth := r.Header["Authorization"]
	authOK := m.auth == nil || len(auth) == 1 && auth[0] == string(m.auth)
	a := m.answer(r.Method == http.MethodPost, r.URL.Path, authOK, body.Bytes())
	h := w.Header()
	if a.status != 200 {
		h["Server"], h["Content-Type"] = mockServerNameValue, mockJSONValue
		h["Content-Length"] = []string{strconv.Itoa(len(a.body))}
		w.WriteHeader(a.status)
		w.Write(a.body) //nolint:errcheck // the client's loss
		return
	}
	for k, v := range mockHeaderValues {
		h[k] = v
	}
	if a.events == nil {
		h["Content-Type"] = mockJSONValue
		h["Content-Length"] = []string{strconv.Itoa(len(a.body))} // else net/http chunks an embeddings answer
		w.Write(a.body)                                           //nolint:errcheck // the client's loss
		return
	}
	h["Content-Type"], h["Cache-Control"] = mockSSEValue, mockNoCacheValue
	flush := w.(http.Flusher).Flush
	for _, ev := range a.events {
		if m.delay > 0 {
			time.Sleep(m.delay)
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		flush()
	}
}
