package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const streamBody = `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`

// openStream starts a streamed request and returns its body reader.
func (tg *testGateway) openStream(t *testing.T, client *http.Client) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequest("POST", tg.url+"/v1/chat/completions", strings.NewReader(streamBody))
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return resp, bufio.NewReader(resp.Body)
}

// TestTimeouts: the first-byte, idle and total timeouts, over http and
// https (through the TLS connection the gateway makes).
func TestTimeouts(t *testing.T) {
	for _, sc := range schemes {
		t.Run(sc.name, func(t *testing.T) { timeouts(t, sc.start) })
	}
}

func timeouts(t *testing.T, start mockStart) {
	evs := events(fixture(t, "chat_stream.sse"))
	hang := func(w http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() }
	stall := func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(evs[0])
		w.Write(evs[1])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	t.Run("first byte", func(t *testing.T) {
		tg := startGateway(t, channel("oa", start(t, hang).baseURL(), "timeouts: {first_byte: 200ms}"))
		postTimesOut(t, tg, "200ms first-byte")
	})
	t.Run("idle mid-stream", func(t *testing.T) {
		tg := startGateway(t, channel("oa", start(t, stall).baseURL(), "timeouts: {idle: 200ms}"))
		resp, body := tg.post(t, streamBody)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		got := events(body)
		if len(got) != 3 || !bytes.HasPrefix(got[2], []byte(`data: {"error":{`)) || !bytes.Contains(got[2], []byte("upstream_timeout")) {
			t.Fatalf("want two events and an error event, got:\n%s", body)
		}
	})
	t.Run("total", func(t *testing.T) {
		var many [][]byte
		for range 200 {
			many = append(many, evs[1])
		}
		tg := startGateway(t, channel("oa", start(t, streamReply(many, 10*time.Millisecond)).baseURL(),
			"timeouts: {total: 300ms}"))
		start := time.Now()
		_, body := tg.post(t, streamBody)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("stream ran %v with a 300ms total timeout", d)
		}
		if got := events(body); len(got) < 5 || !bytes.Contains(got[len(got)-1], []byte(`"error"`)) {
			t.Fatalf("want some events then an error event, got %d events, last %q", len(got), got[len(got)-1])
		}
	})
}

// postTimesOut posts a request that meets timeout, and checks it is a 504
// within 2 s.
func postTimesOut(t *testing.T, tg *testGateway, timeout string) {
	t.Helper()
	start := time.Now()
	resp, body := tg.post(t, miniBody)
	checkError(t, resp, body, 504, "upstream_timeout")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v with a %s timeout", d, timeout)
	}
}

// TestClientDisconnectCancelsUpstream: a client that goes away mid-stream
// must end the upstream request and leave no goroutine behind, over http
// and https.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	for _, sc := range schemes {
		t.Run(sc.name, func(t *testing.T) { streamGoneCancels(t, sc.start) })
	}
}

func streamGoneCancels(t *testing.T, start mockStart) {
	evs := events(fixture(t, "chat_stream.sse"))
	var many [][]byte
	for range 500 {
		many = append(many, evs[1])
	}
	var cancelled atomic.Int64
	up := start(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		streamReply(many, 20*time.Millisecond)(w, r, body)
		if r.Context().Err() != nil {
			cancelled.Add(1)
		}
	})
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	stream := func() {
		resp, r := tg.openStream(t, client)
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// One at a time, each until the upstream saw it cancelled and the
	// gateway logged it, so that idle server workers are reused.
	for i := range 6 {
		stream()
		waitFor(t, "upstream request cancelled", func() bool { return cancelled.Load() == int64(i+1) })
		waitFor(t, "access log", func() bool { return len(tg.accessLines(t)) == i+1 })
	}
	// Those warmed up pools and workers: the baseline is taken after them.
	before := runtime.NumGoroutine()
	for i := range 5 {
		stream()
		waitFor(t, "upstream request cancelled", func() bool { return cancelled.Load() == int64(i+7) })
		waitFor(t, "access log", func() bool { return len(tg.accessLines(t)) == i+7 })
	}
	waitFor(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= before })
	for _, l := range tg.accessLines(t) {
		if l["status"] != 499.0 {
			t.Errorf("access log of a dropped stream: %v", l)
		}
	}
}

// TestClientGoneBeforeUpstreamPause: a client that left is noticed when the
// relay writes before waiting for the upstream, so the upstream request is
// dropped then, not after the upstream's next event (here 5 s away: a
// reasoning model thinking).
func TestClientGoneBeforeUpstreamPause(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	left := make(chan struct{})
	dropped := make(chan time.Time, 1)
	addr := rawUpstream(t, func(conn net.Conn) {
		go func() { io.Copy(io.Discard, conn); dropped <- time.Now() }()
		conn.Write(append([]byte(rawStreamHead), chunks(evs[:1])...))
		<-left
		conn.Write(chunks(evs[1:2])) // the gateway's write of this one fails
		time.Sleep(5 * time.Second)
		conn.Write(chunks(evs[2:3]))
	})
	tg := startGateway(t, channel("oa", "http://"+addr+"/v1", ""))
	conn, _ := rawStreamRequest(t, tg, streamBody)
	conn.(*net.TCPConn).SetLinger(0) // a reset: the gateway's next write fails
	conn.Close()
	gone := time.Now()
	close(left)
	select {
	case at := <-dropped:
		if d := at.Sub(gone); d > 2*time.Second {
			t.Fatalf("the upstream was dropped %v after the client left, after its pause", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was never dropped")
	}
	waitFor(t, "access log", func() bool { return len(tg.accessLines(t)) == 1 })
	if l := tg.accessLines(t)[0]; l["status"] != 499.0 {
		t.Errorf("access log of the abandoned stream: %v", l)
	}
}

// TestGracefulShutdown: SIGTERM's shutdown lets an open stream finish and
// refuses new connections.
func TestGracefulShutdown(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	up := newMock(t, streamReply(evs, 40*time.Millisecond))
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	resp, r := tg.openStream(t, http.DefaultClient)
	defer resp.Body.Close()
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shut <- tg.g.Shutdown(ctx)
	}()
	rest, err := io.ReadAll(r)
	if err != nil || !bytes.HasSuffix(rest, []byte("data: [DONE]\n\n")) {
		t.Fatalf("stream cut by shutdown (%v): %q", err, rest)
	}
	if err := <-shut; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := http.Get(tg.url + "/healthz"); err == nil {
		t.Fatal("a new connection was accepted after shutdown")
	}
}
