//go:build !race

package proxy

import (
	"io"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
	"github.com/valyala/fasthttp"
)

func TestKeyLookupDoesNotAllocate(t *testing.T) {
	kr, secret := newTestKeyring(t)
	testutil.Allocs(t, "key lookup", 0, func() { kr.find(secret, time.Now()) })
}

func TestRelayAllocatesNothingPerEvent(t *testing.T) {
	for name, raw := range map[string][]byte{"plain": streamFixture(t, 200), "api.openai.com": wireStreamFixture(t, 200)} {
		x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
		rd := &chunkedReader{}
		rl := newBenchRelay(rd, x)
		// Decoding the one usage object costs a few allocations per stream;
		// the 200 events themselves must cost none.
		testutil.AllocsN(t, 20, "a 200-event stream, "+name, 4, func() {
			rd.data, rd.size = raw, 512
			rl.reset(rd, x)
			rl.WriteTo(io.Discard) //nolint:errcheck
		})
	}
}

// A key's limits are reported on every request that has them: in each
// style's header names, with no allocation.
func TestRateLimitHeadersDoNotAllocate(t *testing.T) {
	var resp fasthttp.Response
	buf := make([]byte, 0, 64)
	rl := codec.RateLimit{RetryAfter: 1500 * time.Millisecond,
		Requests: codec.Quota{Limit: 600, Remaining: 599, Reset: 100 * time.Millisecond},
		Tokens:   codec.Quota{Limit: 200000, Remaining: 199000, Reset: time.Second}}
	for _, s := range []*dialect{styleOpenAI, styleAnthropic, styleGemini} {
		s.SetRateLimit(&resp.Header, buf, rl) // the headers exist from here on
		testutil.Allocs(t, s.Name()+" SetRateLimit", 0, func() { buf = s.SetRateLimit(&resp.Header, buf, rl) })
	}
}

// Passing an upstream's headers on costs nothing when it sends none of those
// a client is told (a mock, a self-hosted server), whatever the two styles;
// nor, once the client's headers exist, when it sends them all.
func TestPassHeadersDoNotAllocate(t *testing.T) {
	styles := []*dialect{styleOpenAI, styleAnthropic, styleGemini}
	for _, client := range styles {
		for _, up := range styles {
			// A pass to a client of the upstream's style moves the values
			// it passes out of the answer's header: every pass starts from
			// a full one (full, copied into sent).
			var full, sent fasthttp.ResponseHeader
			full.Set("X-Request-Id", "req_1")
			full.Set("Request-Id", "req_2")
			full.Set("Openai-Processing-Ms", "120")
			full.Set("X-Ratelimit-Limit-Requests", "600")
			full.Set("X-Ratelimit-Remaining-Requests", "599")
			full.Set("X-Ratelimit-Reset-Requests", "100ms")
			full.Set("Anthropic-Ratelimit-Requests-Limit", "600")
			full.Set("Anthropic-Ratelimit-Requests-Remaining", "599")
			full.Set("Anthropic-Ratelimit-Requests-Reset", time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
			full.CopyTo(&sent)
			x := &exchange{key: &Key{}, style: client, buf: make([]byte, 0, 64)}
			ch := &channel{style: up}
			var bare, resp fasthttp.ResponseHeader
			bare.SetContentType("application/json")
			testutil.Allocs(t, client.Name()+" client, "+up.Name()+" upstream, no headers", 0,
				func() { passHeaders(&resp, x, ch, &bare) })
			passHeaders(&resp, x, ch, &sent) // the client's header has grown its storage from here on
			var passed []string              // the headers passed with a value
			for k, v := range resp.All() {
				if len(v) > 0 {
					passed = append(passed, string(k))
				}
			}
			// Each answer's header is a new one (reset, its storage kept):
			// passed headers are appended to it, not searched for.
			testutil.Allocs(t, client.Name()+" client, "+up.Name()+" upstream, all headers", 0,
				func() { resp.Reset(); full.CopyTo(&sent); passHeaders(&resp, x, ch, &sent) })
			for _, k := range passed { // the measured passes passed values, not what the first left
				if len(resp.Peek(k)) == 0 {
					t.Errorf("%s client, %s upstream: %s passed empty", client.Name(), up.Name(), k)
				}
			}
		}
	}
}

// TestResponsesRelayAllocatesNothing: a Responses stream relayed on the
// pass-through path, its id, status and usage read, costs nothing per
// event, nor per stream once the relay's buffers have grown.
func TestResponsesRelayAllocatesNothing(t *testing.T) {
	raw := responsesStream(200)
	x := &exchange{model: "fast", route: &route{public: "fast", escaped: "fast"}}
	rd := &chunkedReader{}
	rl := newBenchRelay(rd, x)
	testutil.AllocsN(t, 20, "a 209-event Responses stream", 0, func() {
		rd.data, rd.size = raw, 512
		rl.resetAs(rd, x, openai.Responses)
		rl.WriteTo(io.Discard) //nolint:errcheck
		if len(rl.tc.Relayed().ID) == 0 {
			panic("no id read")
		}
	})
}

// TestObserveUnroutedDoesNotAllocate: a request with no route (a 401, a
// 404, a key's 429) is counted as cheaply as a routed one, and counted.
func TestObserveUnroutedDoesNotAllocate(t *testing.T) {
	m := newMetrics(&Gateway{}, nil)
	x := &exchange{endpoint: "chat", status: 401, elapsed: time.Millisecond}
	m.observe(x)
	testutil.Allocs(t, "observing a request with no route", 0, func() { m.observe(x) })
	y := &exchange{endpoint: "chat", model: "other", status: 404}
	m.observe(y)
	count := func(labels ...string) float64 {
		var d dto.Metric
		m.requests.WithLabelValues(labels...).Write(&d)
		return d.GetCounter().GetValue()
	}
	if n := count("chat", "", "401"); n < 2 {
		t.Errorf("401s counted %v, want at least 2", n)
	}
	if n := count("chat", "other", "404"); n != 1 {
		t.Errorf("404s of model other counted %v, want 1", n)
	}
}

// TestWholeRequestAllocs: a chat completion through the gateway, the
// client and the mock upstream in the process, allocates what it did (the
// body's io.LimitReader; and the usage row's request id with a usage
// writer), measured as BenchmarkGatewayInMemory measures it.
func TestWholeRequestAllocs(t *testing.T) {
	response, err := os.ReadFile("testdata/chat_response.json")
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}]}`
	for _, c := range []struct {
		usage  bool
		budget int64
	}{{false, 1}, {true, 2}} {
		r := testing.Benchmark(func(b *testing.B) {
			benchGateway(b, benchRequest{path: "/v1/chat/completions", body: body, usage: c.usage}, func(ctx *fasthttp.RequestCtx) {
				ctx.SetContentType("application/json")
				ctx.SetBody(response)
			})
		})
		if n := r.AllocsPerOp(); r.N == 0 || n > c.budget {
			t.Errorf("usage rows %v: %d allocations a request over %d requests, want at most %d", c.usage, n, r.N, c.budget)
		}
	}
}
