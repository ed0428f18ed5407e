package proxy_test

import (
	"strconv"
	"strings"
	"testing"
)

// A key's limit on one model refuses that model only, and what it refuses
// is not counted under the key's own limit.
func TestKeyModelLimit(t *testing.T) {
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGateway(t, channel("oa", up.baseURL(), "")+"  - {name: demo, type: demo, models: [demo], pace: 1ms}\n")
	demo := `{"model":"demo","messages":[{"role":"user","content":"Hi"}]}`
	statuses := func(body string, n int) (out []int) {
		for range n {
			resp, _ := tg.do(t, "POST", "/v1/chat/completions", modeledKey, body)
			out = append(out, resp.StatusCode)
		}
		return out
	}
	if got := statuses(miniBody, 1); got[0] != 200 {
		t.Fatalf("first gpt-4o-mini request: %d", got[0])
	}
	resp, body := tg.do(t, "POST", "/v1/chat/completions", modeledKey, miniBody)
	checkError(t, resp, body, 429, "rate_limit_exceeded")
	if !strings.Contains(string(body), "for the model 'gpt-4o-mini'") {
		t.Errorf("the 429 does not name the model: %s", body)
	}
	// rpm 3: one gpt-4o-mini request counted, so two demo requests fit.
	if got := statuses(demo, 3); got[0] != 200 || got[1] != 200 || got[2] != 429 {
		t.Fatalf("demo requests after the model's 429: %v, want 200 200 429", got)
	}
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{`rosetta_rate_limited_total{scope="key"} 1`, `rosetta_rate_limited_total{scope="key_model"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// A channel at its own limit is passed over, not failed: the next one
// answers; with none left, the client gets a 429 with a wait.
func TestChannelLimitPassesOver(t *testing.T) {
	ok := fixture(t, "chat_response.json")
	capped, spare := newMock(t, jsonReply(200, ok)), newMock(t, jsonReply(200, ok))
	tg := startGateway(t, channel("capped", capped.baseURL(), "rpm: 2")+channel("spare", spare.baseURL(), "priority: 1"))
	for i := range 5 {
		if resp, body := tg.post(t, miniBody); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if capped.hits.Load() != 2 || spare.hits.Load() != 3 {
		t.Fatalf("capped got %d, spare %d; want 2 and 3", capped.hits.Load(), spare.hits.Load())
	}
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	if !strings.Contains(string(metrics), `rosetta_rate_limited_total{scope="channel"} 3`) ||
		!strings.Contains(string(metrics), `channel="capped",outcome="rate_limited"} 0`) {
		t.Errorf("metrics: the channel was not passed over three times, or counted as failing:\n%s", metrics)
	}

	alone := startGateway(t, channel("capped", capped.baseURL(), "rpm: 1"))
	alone.post(t, miniBody)
	resp, body := alone.post(t, miniBody)
	checkError(t, resp, body, 429, "rate_limit_exceeded")
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(string(body), "upstream channels for 'gpt-4o-mini' are at their rate limits") {
		t.Errorf("body %s", body)
	}
}
