package proxy_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

const miniBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`

func TestPriorityAndWeights(t *testing.T) {
	ok := fixture(t, "chat_response.json")
	light, heavy, backup := newMock(t, jsonReply(200, ok)), newMock(t, jsonReply(200, ok)), newMock(t, jsonReply(200, ok))
	tg := startGateway(t,
		channel("light", light.baseURL(), "weight: 1")+
			channel("heavy", heavy.baseURL(), "weight: 3")+
			channel("backup", backup.baseURL(), "priority: 1"))
	const n = 400
	for range n {
		if resp, body := tg.post(t, miniBody); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	}
	if backup.hits.Load() != 0 {
		t.Errorf("the lower-priority channel got %d requests while the others were healthy", backup.hits.Load())
	}
	// Binomial(400, 1/4): mean 100, standard deviation under 9.
	if l := light.hits.Load(); l < 60 || l > 140 || l+heavy.hits.Load() != n {
		t.Errorf("weights 1:3 gave %d:%d", l, heavy.hits.Load())
	}
}

func TestFailover(t *testing.T) {
	ok := fixture(t, "chat_response.json")
	for _, tc := range []struct {
		name  string
		first func(t *testing.T) string // base URL of the failing channel
	}{
		{"refused connection", closedPort},
		{"500", func(t *testing.T) string {
			return newMock(t, jsonReply(500, []byte(`{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`))).baseURL()
		}},
		{"429", func(t *testing.T) string {
			return newMock(t, jsonReply(429, []byte(`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`))).baseURL()
		}},
		{"closed before answering", func(t *testing.T) string {
			return newMock(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				c, _, _ := w.(http.Hijacker).Hijack()
				c.Close()
			}).baseURL()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := newMock(t, jsonReply(200, ok))
			tg := startGateway(t, channel("bad", tc.first(t), "priority: 0")+channel("good", good.baseURL(), "priority: 1"))
			resp, body := tg.post(t, miniBody)
			if resp.StatusCode != 200 || good.hits.Load() != 1 {
				t.Fatalf("status %d after failover (good channel hit %d times): %s", resp.StatusCode, good.hits.Load(), body)
			}
			waitFor(t, "access log", func() bool { return len(tg.accessLines(t)) == 1 })
			if l := tg.accessLines(t)[0]; l["attempts"] != 2.0 || l["channel"] != "good" {
				t.Errorf("access log %v", l)
			}
		})
	}
}

func TestFailoverExhausted(t *testing.T) {
	busy := newMock(t, jsonReply(503, []byte(`{"error":{"message":"overloaded","type":"server_error","param":null,"code":null}}`)))
	tg := startGateway(t, channel("a", closedPort(t), "")+channel("b", busy.baseURL(), "priority: 1"))
	resp, body := tg.post(t, miniBody)
	checkError(t, resp, body, 503, "") // the last upstream's own status and message
	if !bytes.Contains(body, []byte("overloaded")) {
		t.Errorf("last upstream error lost: %s", body)
	}
	tg2 := startGateway(t, channel("a", closedPort(t), ""))
	resp, body = tg2.post(t, miniBody)
	checkError(t, resp, body, 502, "upstream_unreachable")
}

func TestCircuitBreakerOpensAndRecovers(t *testing.T) {
	healthy := make(chan bool, 1)
	healthy <- false
	ok := fixture(t, "chat_response.json")
	flaky := newMock(t, func(w http.ResponseWriter, r *http.Request, b []byte) {
		h := <-healthy
		healthy <- h
		if h {
			jsonReply(200, ok)(w, r, b)
		} else {
			jsonReply(500, []byte(`{"error":{"message":"down","type":"server_error","param":null,"code":null}}`))(w, r, b)
		}
	})
	tg := startGateway(t, channel("flaky", flaky.baseURL(), "breaker: {failures: 3, cooldown: 300ms}"))
	for range 3 {
		if resp, _ := tg.post(t, miniBody); resp.StatusCode != 500 {
			t.Fatalf("status %d, want the upstream's 500", resp.StatusCode)
		}
	}
	// Open: the channel is not even tried.
	resp, body := tg.post(t, miniBody)
	checkError(t, resp, body, 503, "no_channel_available")
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra < 1 {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if flaky.hits.Load() != 3 {
		t.Fatalf("open circuit still sent requests: %d hits", flaky.hits.Load())
	}
	resp, body = tg.do(t, "GET", "/readyz", "", "")
	if resp.StatusCode != 503 || !bytes.Contains(body, []byte(`"circuit":"open"`)) {
		t.Fatalf("readyz with every circuit open: %d %s", resp.StatusCode, body)
	}
	// After the cooldown one probe goes through; it fails, and the circuit opens again.
	time.Sleep(350 * time.Millisecond)
	if resp, _ := tg.post(t, miniBody); resp.StatusCode != 500 || flaky.hits.Load() != 4 {
		t.Fatalf("probe: status %d, hits %d", resp.StatusCode, flaky.hits.Load())
	}
	if resp, _ := tg.post(t, miniBody); resp.StatusCode != 503 {
		t.Fatalf("after a failed probe: status %d, want 503", resp.StatusCode)
	}
	// The upstream recovers: the next probe closes the circuit.
	<-healthy
	healthy <- true
	time.Sleep(350 * time.Millisecond)
	for range 3 {
		if resp, body := tg.post(t, miniBody); resp.StatusCode != 200 {
			t.Fatalf("after recovery: %d %s", resp.StatusCode, body)
		}
	}
	resp, body = tg.do(t, "GET", "/readyz", "", "")
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"circuit":"closed"`)) {
		t.Fatalf("readyz after recovery: %d %s", resp.StatusCode, body)
	}
	if logs := tg.logs.String(); !strings.Contains(logs, "channel circuit open") || !strings.Contains(logs, "channel circuit closed") {
		t.Error("circuit transitions not logged")
	}
}

func TestRateLimit(t *testing.T) {
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	for i := range 2 {
		resp, body := tg.do(t, "POST", "/v1/chat/completions", limitedKey, miniBody)
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
		if got := resp.Header.Get("X-Ratelimit-Remaining-Requests"); got != strconv.Itoa(1-i) {
			t.Errorf("request %d: remaining %q", i, got)
		}
	}
	resp, body := tg.do(t, "POST", "/v1/chat/completions", limitedKey, miniBody)
	checkError(t, resp, body, 429, "rate_limit_exceeded")
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 120 {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if resp.Header.Get("X-Ratelimit-Limit-Requests") != "2" || resp.Header.Get("X-Ratelimit-Reset-Requests") == "" {
		t.Errorf("rate-limit headers: %v", resp.Header)
	}
	var e struct{ Error struct{ Type string } }
	json.Unmarshal(body, &e)
	if e.Error.Type != "requests" {
		t.Errorf("type %q, want requests", e.Error.Type)
	}
	if up.hits.Load() != 2 {
		t.Errorf("limited request reached the upstream")
	}
	// Other keys are not affected.
	if resp, _ := tg.post(t, miniBody); resp.StatusCode != 200 {
		t.Errorf("another key got %d", resp.StatusCode)
	}
}

func TestMetrics(t *testing.T) {
	ok := fixture(t, "chat_response.json")
	good := newMock(t, jsonReply(200, ok))
	bad := newMock(t, jsonReply(500, []byte(`{"error":{"message":"x","type":"server_error","param":null,"code":null}}`)))
	tg := startGateway(t, channel("bad", bad.baseURL(), "")+channel("good", good.baseURL(), "priority: 1"))
	tg.post(t, miniBody)
	tg.post(t, `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	tg.do(t, "POST", "/v1/chat/completions", "sk-wrong-0123456789abcdef", miniBody)
	resp, body := tg.do(t, "GET", "/metrics", "", "")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, want := range []string{
		`rosetta_requests_total{endpoint="chat.completions",model="gpt-4o-mini",status="200"} 2`,
		`rosetta_requests_total{endpoint="chat.completions",model="",status="401"} 1`,
		`rosetta_upstream_attempts_total{channel="bad",outcome="server_error"} 2`,
		`rosetta_upstream_attempts_total{channel="good",outcome="ok"} 2`,
		`rosetta_tokens_total{kind="input",model="gpt-4o-mini"} 38`,
		`rosetta_channel_circuit_open{channel="bad"} 0`,
		`rosetta_open_streams 0`,
		`rosetta_request_duration_seconds_count{endpoint="chat.completions",stream="true"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestFailoverBodies: each channel tried gets the body for its own model
// name, whether the client's bytes go as they are (the same name) or with
// the name spliced in, in either order of a failover.
func TestFailoverBodies(t *testing.T) {
	ok := fixture(t, "chat_response.json")
	boom := []byte(`{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`)
	mapped := strings.Replace(miniBody, `"gpt-4o-mini"`, `"gpt-4o-mini-2024-07-18"`, 1)
	for _, sameFirst := range []bool{true, false} {
		bad, good := newMock(t, jsonReply(500, boom)), newMock(t, jsonReply(200, ok))
		same, other := bad, good
		if !sameFirst {
			same, other = good, bad
		}
		tg := startGateway(t, channel("same", same.baseURL(), "priority: "+map[bool]string{true: "0", false: "1"}[sameFirst])+
			channel("other", other.baseURL(), `model_map: {gpt-4o-mini: gpt-4o-mini-2024-07-18}, priority: `+map[bool]string{true: "1", false: "0"}[sameFirst]))
		for range 2 { // the second request reuses the pooled buffers
			if resp, body := tg.post(t, miniBody); resp.StatusCode != 200 {
				t.Fatalf("same first %v: status %d: %s", sameFirst, resp.StatusCode, body)
			}
			if got := string(same.lastRequest().body); got != miniBody {
				t.Errorf("same first %v: the unmapped channel got %s", sameFirst, got)
			}
			if got := string(other.lastRequest().body); got != mapped {
				t.Errorf("same first %v: the mapped channel got %s", sameFirst, got)
			}
		}
	}
}
