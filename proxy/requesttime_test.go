package proxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWholeAnswerTimes: a whole answer's latency is read from the clock
// once, when the answer is in (its ttfb too), counted from the time fasthttp
// read for the request; the line's time is the answer's arrival.
func TestWholeAnswerTimes(t *testing.T) {
	const delay = 30 * time.Millisecond
	m := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		time.Sleep(delay)
		jsonReply(200, fixture(t, "chat_response.json"))(w, r, body)
	})
	tg := startGateway(t, channel("oa", m.baseURL(), ""))
	sent := time.Now()
	if resp, body := tg.post(t, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	got := time.Now()
	var line map[string]any
	waitFor(t, "the access line", func() bool {
		if lines := tg.accessLines(t); len(lines) == 1 {
			line = lines[0]
			return true
		}
		return false
	})
	latency, _ := line["latency"].(float64)
	ttfb, _ := line["ttfb"].(float64)
	if latency != ttfb || time.Duration(latency) < delay || time.Duration(latency) > got.Sub(sent) {
		t.Errorf("latency %v, ttfb %v: want them equal, between %v and %v", time.Duration(latency), time.Duration(ttfb), delay, got.Sub(sent))
	}
	at, err := time.Parse(time.RFC3339Nano, line["time"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if start := at.Add(-time.Duration(latency)); start.Before(sent.Add(-time.Millisecond)) || at.After(got.Add(time.Millisecond)) {
		t.Errorf("line's time %v, request's start %v: not within the client's %v to %v", at, start, sent, got)
	}
}

// TestSlowUploadTimes: a request's time starts once its body is in, not
// at its head: a client uploading for longer than the upstream's deadline
// leaves gets its answer, and the latency leaves the upload out. A JSON
// body is read before its handler runs; a multipart upload (an audio
// transcription, its model after the file) is spooled by its handler.
func TestSlowUploadTimes(t *testing.T) {
	const delay = 300 * time.Millisecond
	t.Run("json", func(t *testing.T) {
		m := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
			time.Sleep(delay)
			jsonReply(200, fixture(t, "chat_response.json"))(w, r, body)
		})
		tg := startGateway(t, channel("oa", m.baseURL(), "timeouts: {total: 600ms}"))
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("hi ", 4000) + `"}]}`
		slowUpload(t, tg, "/v1/chat/completions", "application/json", []byte(body), delay)
	})
	t.Run("multipart", func(t *testing.T) {
		m := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
			time.Sleep(delay)
			jsonReply(200, []byte(transcriptAnswer))(w, r, body)
		})
		tg := startGateway(t, mediaChannel("up", m, ", timeouts: {total: 600ms}"))
		form, ct := uploadForm("file", 16<<10, "model", "gpt-ears")
		slowUpload(t, tg, "/v1/audio/transcriptions", ct, form, delay)
	})
}

// slowUpload posts body to path, its tail 400 ms after its first 8 KiB
// (what fasthttp reads before it calls the handler), and checks that the
// answer is a 200 whose latency, at least the upstream's delay, leaves the
// upload out.
func slowUpload(t *testing.T, tg *testGateway, path, ct string, body []byte, delay time.Duration) {
	t.Helper()
	const upload, first = 400 * time.Millisecond, 8 << 10
	conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: %s\r\nContent-Length: %d\r\n\r\n%s", path, clientKey, ct, len(body), body[:first])
	time.Sleep(upload)
	sent := time.Now()
	if _, err := conn.Write(body[first:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := time.Now()
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s: the upload counted against timeouts.total", resp.StatusCode, answer)
	}
	latency := lineLatency(t, tg)
	if latency < delay || latency > got.Sub(sent) {
		t.Errorf("latency %v: want between %v and %v, the upload (%v) left out", latency, delay, got.Sub(sent), upload)
	}
}

// TestStreamAskedWholeAnswerLatency: a stream request answered with plain
// JSON ends when the answer's body is in, not at its head.
func TestStreamAskedWholeAnswerLatency(t *testing.T) {
	const delay = 300 * time.Millisecond
	answer := fixture(t, "chat_response.json")
	m := newMock(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		time.Sleep(delay)
		w.Write(answer)
	})
	tg := startGateway(t, channel("oa", m.baseURL(), ""))
	resp, body := tg.post(t, `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if latency := lineLatency(t, tg); latency < delay {
		t.Errorf("latency %v: want at least the body's %v", latency, delay)
	}
}

// lineLatency is the latency of the one access line tg writes.
func lineLatency(t *testing.T, tg *testGateway) time.Duration {
	t.Helper()
	var latency float64
	waitFor(t, "the access line", func() bool {
		lines := tg.accessLines(t)
		if len(lines) == 1 {
			latency, _ = lines[0]["latency"].(float64)
		}
		return len(lines) == 1
	})
	return time.Duration(latency)
}
