package proxy_test

import (
	"net/http"
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
