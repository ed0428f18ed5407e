package proxy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// failoverChannels serve the model demo: first a channel nothing listens
// for, then one whose upstream is overloaded, then the demo.
func failoverChannels(overloaded string) string {
	return `  - {name: refused, type: openai, base_url: "http://127.0.0.1:1/v1", api_keys: [k], models: [demo], priority: 0, breaker: {failures: 3, cooldown: 1m}}
  - {name: busy, type: openai, base_url: "` + overloaded + `/v1", api_keys: [k], models: [demo], priority: 1}
  - {name: demo, type: demo, models: [demo], pace: 1ms, priority: 2}
`
}

func overloadedUpstream(t *testing.T) string {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(503)
		fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	t.Cleanup(up.Close)
	return up.URL
}

// TestAttemptsOfAFailover: a request that fails over is told, through
// ServeAs, which channels it tried, why each failed and how long each
// took, and its usage row keeps them for the console, whoever sent it; a
// request its first channel answers keeps nothing.
func TestAttemptsOfAFailover(t *testing.T) {
	st := openStore(t)
	rows := &rowSink{}
	var gw *proxy.Gateway
	var served []proxy.Attempt
	mount := func(r *router.Router) {
		r.POST("/as/{id}", func(ctx *fasthttp.RequestCtx) {
			id, _ := strconv.ParseInt(ctx.UserValue("id").(string), 10, 64)
			k, _ := st.Key(context.Background(), id)
			ctx.Request.SetRequestURI("/v1/chat/completions")
			served = gw.ServeAs(ctx, k)
		})
	}
	tg := startGatewayWith(t, failoverChannels(overloadedUpstream(t)), proxy.Options{Store: st, Usage: rows, Mount: mount})
	gw = tg.g
	k := createKey(t, st, consoleKey, nil)
	want := []proxy.Attempt{
		{Channel: "refused", Status: 502, Error: "connection refused to 127.0.0.1:1"},
		{Channel: "busy", Status: 503, Error: "HTTP 503: overloaded"},
		{Channel: "demo", Status: 200},
	}

	resp, _ := tg.do(t, "POST", "/as/"+strconv.FormatInt(k.ID, 10), "", demoBody)
	if resp.StatusCode != 200 || fmt.Sprint(timed(t, served)) != fmt.Sprint(want) {
		t.Errorf("ServeAs: %d, attempts %+v, want %+v", resp.StatusCode, served, want)
	}
	if got := keptAttempts(t, rows, resp); fmt.Sprint(timed(t, got)) != fmt.Sprint(want) {
		t.Errorf("the playground request's attempts: %+v", got)
	}
	// A stream's answering attempt lasts until the stream ended: the
	// demo paces its words a millisecond apart.
	resp, _ = tg.do(t, "POST", "/v1/chat/completions", clientKey, `{"model":"demo","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	got := keptAttempts(t, rows, resp)
	if fmt.Sprint(timed(t, got)) != fmt.Sprint(want) {
		t.Errorf("a client's streamed request's attempts: %+v", got)
	}
	if elapsed := rowOf(t, rows, resp).Latency; sum(got) > elapsed || got[2].Duration < time.Millisecond {
		t.Errorf("attempts of a stream that took %s: %+v", elapsed, got)
	}

	st0 := channelStatus(t, gw, "refused")
	if st0.State != "closed" || st0.Requests != 2 || st0.ErrorRate != 1 ||
		st0.LastError != "connection refused to 127.0.0.1:1" || time.Since(st0.LastErrorAt) > time.Minute {
		t.Errorf("refused after two requests: %+v", st0)
	}
	// A test counts as a request: the third failure in a row opens the
	// circuit, and the model's next request goes straight to busy.
	if _, err := gw.TestChannel(context.Background(), "refused"); err == nil || err.Error() != "connection refused to 127.0.0.1:1" {
		t.Errorf("TestChannel: %v", err)
	}
	st1 := channelStatus(t, gw, "refused")
	if until := time.Until(st1.OpenUntil); st1.State != "open" || st1.Requests != 3 || until < 50*time.Second || until > time.Minute {
		t.Errorf("refused after a failed test: %+v", st1)
	}
	resp, _ = tg.do(t, "POST", "/v1/chat/completions", clientKey, demoBody)
	if got := keptAttempts(t, rows, resp); len(got) != 2 || got[0].Channel != "busy" {
		t.Errorf("attempts with refused's circuit open: %+v", got)
	}

	rows2 := &rowSink{}
	tg2 := startGatewayWith(t, demoChannel, proxy.Options{Usage: rows2})
	resp, _ = tg2.do(t, "POST", "/v1/chat/completions", clientKey, demoBody)
	if resp.StatusCode != 200 || rowOf(t, rows2, resp).Attempts != nil {
		t.Errorf("a request answered at once keeps attempts: %d", resp.StatusCode)
	}
	if st := channelStatus(t, tg2.g, "demo"); st.LastError != "" || st.OpenUntil != (time.Time{}) {
		t.Errorf("a healthy channel: %+v", st)
	}
}

// rowOf waits for the usage row of resp's request.
func rowOf(t *testing.T, rows *rowSink, resp *http.Response) store.Usage {
	t.Helper()
	id := resp.Header.Get("X-Request-Id")
	var row store.Usage
	waitFor(t, "the usage row of "+id, func() bool {
		for _, r := range rows.all() {
			if r.RequestID == id {
				row = r
				return true
			}
		}
		return false
	})
	return row
}

// keptAttempts are the attempts the usage row of resp's request keeps.
func keptAttempts(t *testing.T, rows *rowSink, resp *http.Response) []proxy.Attempt {
	t.Helper()
	return rowOf(t, rows, resp).Attempts
}

// timed checks that every attempt took some time, and returns them
// without it, to compare.
func timed(t *testing.T, list []proxy.Attempt) []proxy.Attempt {
	t.Helper()
	out := slices.Clone(list)
	for i := range out {
		if out[i].Duration <= 0 || out[i].Duration > time.Minute {
			t.Errorf("attempt %d took %s", i, out[i].Duration)
		}
		out[i].Duration = 0
	}
	return out
}

func sum(list []proxy.Attempt) (d time.Duration) {
	for _, a := range list {
		d += a.Duration
	}
	return d
}

func channelStatus(t *testing.T, g *proxy.Gateway, name string) proxy.ChannelStatus {
	t.Helper()
	for _, st := range g.Channels() {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no channel %s", name)
	return proxy.ChannelStatus{}
}

// TestModelsNameTheirEndpoints: the console learns which models can embed,
// draw or speak.
func TestModelsNameTheirEndpoints(t *testing.T) {
	tg := startGateway(t, demoChannel+
		`  - {name: an, type: anthropic, base_url: "http://127.0.0.1:1", api_keys: [k], models: [claude]}
`)
	got := map[string]string{}
	for _, m := range tg.g.Models([]string{"*"}) {
		got[m.Name] = fmt.Sprint(m.Endpoints)
	}
	if got["claude"] != "[chat]" || got["demo"] != "[chat completions embeddings rerank images audio realtime]" {
		t.Errorf("endpoints: %v", got)
	}
}
