package proxy

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// upstreamHead is an upstream chat request as the gateway writes it (the
// headers prepare sets, in its order) with a body of n bytes: what an
// upstream connection's Write gets.
func upstreamHead(tb testing.TB, id string, n int) []byte {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.SetRequestURI("http://127.0.0.1:8081/v1/chat/completions")
	req.Header.SetCanonical(strAuthorization, []byte("Bearer sk-upstream-bench-0123456789abcdef"))
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentTypeBytes(strJSON)
	req.Header.SetCanonical(strAccept, strJSON)
	req.Header.SetCanonical(strRequestID, []byte(id))
	req.Header.SetUserAgent("rosetta")
	req.SetBodyString(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("x", n) + `"}]}`)
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := req.Write(w); err != nil {
		tb.Fatal(err)
	}
	w.Flush() //nolint:errcheck // a bytes.Buffer
	return out.Bytes()
}

// BenchmarkWaitingFor is what an upstream connection's Write does with the
// head of a request while exchanges wait: find its request id and the
// exchange waiting under it.
func BenchmarkWaitingFor(b *testing.B) {
	const id = "req_0123456789abcdef01234567"
	p := upstreamHead(b, id, 2700)
	var w watch
	startWaiting([]byte(id), &w)
	defer stopWaiting([]byte(id))
	c := &timedConn{}
	b.ReportAllocs()
	for b.Loop() {
		if waitingFor(p, c) != &w {
			b.Fatal("the waiting exchange not found")
		}
	}
}

// BenchmarkWaitingRequest is what a request waiting for a whole answer
// pays for its client to be watched, while another exchange waits: its
// registration, its upstream connection's finding it by the head it
// writes, and its removal.
func BenchmarkWaitingRequest(b *testing.B) {
	const id = "req_0123456789abcdef01234567"
	p := upstreamHead(b, id, 2700)
	var other, w watch
	startWaiting([]byte("req_another"), &other)
	defer stopWaiting([]byte("req_another"))
	c := &timedConn{}
	b.ReportAllocs()
	for b.Loop() {
		startWaiting([]byte(id), &w)
		if waitingFor(p, c) != &w {
			b.Fatal("the waiting exchange not found")
		}
		stopWaiting([]byte(id))
	}
}

// BenchmarkStreamRegistration is what a stream pays so that no whole
// answer under its id is watched while its head may be written: its
// registration with no watch and its removal, while another exchange
// waits.
func BenchmarkStreamRegistration(b *testing.B) {
	id := []byte("req_0123456789abcdef01234567")
	var other watch
	startWaiting([]byte("req_another"), &other)
	defer stopWaiting([]byte("req_another"))
	b.ReportAllocs()
	for b.Loop() {
		startWaiting(id, nil)
		stopWaiting(id)
	}
}
