package proxy_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// refusal answers a realtime dial with status, an OpenAI error body and,
// when set, a Retry-After header; a 200 is a plain JSON answer, no upgrade.
func refusal(status int, retryAfter string) func(http.ResponseWriter, *http.Request, []byte) {
	if status == 200 {
		return jsonReply(200, []byte(`{}`))
	}
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"refused with %d","type":"server_error","param":null,"code":"code_%d"}}`, status, status)
	}
}

// rtChannel is the YAML of an openai channel at base serving "fast" as
// gpt-4o-realtime, whose breaker opens at the first failure and whose dial
// times out after half a second.
func rtChannel(name, base string, priority int) string {
	return fmt.Sprintf("  - {name: %s, type: openai, base_url: %q, api_keys: [%s], model_map: {fast: gpt-4o-realtime}, "+
		"priority: %d, breaker: {failures: 1, cooldown: 1m}, timeouts: {connect: 200ms, first_byte: 300ms}}\n",
		name, base, upstreamKey, priority)
}

// hangingUpstream accepts a connection and never answers its upgrade.
func hangingUpstream(t *testing.T) string {
	return "http://" + rawUpstream(t, func(conn net.Conn) { io.Copy(io.Discard, conn) }) + "/v1"
}

// TestRealtimeDialFailover: channels that refuse the upgrade (nothing
// listening, 503, 429) are passed over for the next, which carries the
// session; each refusal opens its channel's breaker (one failure here),
// so the next session dials the working channel only; the metrics count
// the failures by outcome, and the first session's attempts are kept for
// the console, each with its cause.
func TestRealtimeDialFailover(t *testing.T) {
	busy := newMock(t, refusal(503, ""))
	limited := newMock(t, refusal(429, "5"))
	up := newRTUpstream(t)
	gone := closedPort(t)
	rows := &rowSink{}
	tg := startGatewayWith(t, rtChannel("gone", gone, 0)+rtChannel("busy", busy.baseURL(), 1)+
		rtChannel("limited", limited.baseURL(), 2)+rtChannel("rt", up.srv.URL+"/v1", 3), proxy.Options{Usage: rows})

	var first *http.Response // the first session's answer
	for session := range 2 {
		c, resp, err := dialRT(t, tg, "fast", bearerHeader(clientKey))
		if err != nil {
			t.Fatalf("session %d: %v", session, err)
		}
		if session == 0 {
			first = resp
		}
		if typ, msg := readEvent(t, c); typ != "session.created" || !bytes.Contains(msg, []byte(`"model":"fast"`)) {
			t.Fatalf("session %d: first event %s", session, msg)
		}
		c.Close(websocket.StatusNormalClosure, "")
		<-up.done
	}
	if busy.hits.Load() != 1 || limited.hits.Load() != 1 || up.dials.Load() != 2 {
		t.Errorf("dials: busy %d, limited %d, rt %d; want 1, 1, 2", busy.hits.Load(), limited.hits.Load(), up.dials.Load())
	}
	if _, model, _, _ := up.seen(); model != "gpt-4o-realtime" {
		t.Errorf("upstream model %q", model)
	}
	attempts := timed(t, keptAttempts(t, rows, first))
	if len(attempts) != 4 {
		t.Fatalf("the first session's attempts: %+v", attempts)
	}
	for i, want := range []proxy.Attempt{
		{Channel: "gone", Status: 502, Error: "connection refused to " + strings.TrimSuffix(strings.TrimPrefix(gone, "http://"), "/v1")},
		{Channel: "busy", Status: 503, Error: "HTTP 503: refused with 503"}, // as an HTTP attempt keeps it
		{Channel: "limited", Status: 429, Error: "HTTP 429: refused with 429"},
		{Channel: "rt", Status: 101},
	} {
		if attempts[i] != want {
			t.Errorf("attempt %d: %+v, want %+v", i, attempts[i], want)
		}
	}
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{
		`rosetta_channel_circuit_open{channel="gone"} 1`,
		`rosetta_channel_circuit_open{channel="busy"} 1`,
		`rosetta_channel_circuit_open{channel="limited"} 1`,
		`rosetta_channel_circuit_open{channel="rt"} 0`,
		`rosetta_upstream_attempts_total{channel="gone",outcome="unreachable"} 1`,
		`rosetta_upstream_attempts_total{channel="busy",outcome="server_error"} 1`,
		`rosetta_upstream_attempts_total{channel="limited",outcome="rate_limited"} 1`,
		`rosetta_upstream_attempts_total{channel="rt",outcome="ok"} 2`,
	} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestRealtimeDialExhausted: when no channel accepts the session the
// client gets a plain HTTP error in OpenAI's shape, as an HTTP request
// whose failover is exhausted does (failover.exhausted): the last
// channel's failure, its status as the upstream said it, a 429 with the
// shortest Retry-After of the channels that said 429; 502 for a channel
// unreachable or answering with no upgrade, 504 for one silent; a channel
// that blames the request (400) is not failed over.
func TestRealtimeDialExhausted(t *testing.T) {
	for _, tc := range []struct {
		channels   []string // in priority order: a status[:Retry-After] answered, "closed" or "silent"
		hits       []int64  // the dials each answering channel saw
		status     int
		code       string
		retryAfter string
	}{
		{[]string{"429:7", "429:3"}, []int64{1, 1}, 429, "code_429", "3"},
		{[]string{"500", "429:3"}, []int64{1, 1}, 429, "code_429", "3"},
		{[]string{"429:3", "503"}, []int64{1, 1}, 503, "code_503", ""},
		{[]string{"429:3", "503", "429:5"}, []int64{1, 1, 1}, 429, "code_429", "3"},
		{[]string{"closed", "closed"}, nil, 502, "upstream_unreachable", ""},
		{[]string{"silent"}, nil, 504, "upstream_timeout", ""},
		{[]string{"504"}, []int64{1}, 504, "code_504", ""},
		{[]string{"200"}, []int64{1}, 502, "upstream_error", ""}, // answered, but no upgrade
		{[]string{"400", "500"}, []int64{1, 0}, 400, "code_400", ""},
	} {
		t.Run(strings.Join(tc.channels, ","), func(t *testing.T) {
			var yaml strings.Builder
			var mocks []*mockUpstream
			for i, spec := range tc.channels {
				base := ""
				switch status, retryAfter, _ := strings.Cut(spec, ":"); status {
				case "closed":
					base = closedPort(t)
				case "silent":
					base = hangingUpstream(t)
				default:
					code, _ := strconv.Atoi(status)
					m := newMock(t, refusal(code, retryAfter))
					mocks, base = append(mocks, m), m.baseURL()
				}
				yaml.WriteString(rtChannel(fmt.Sprintf("ch%d", i), base, i))
			}
			tg := startGateway(t, yaml.String())
			start := time.Now()
			c, resp, err := dialRT(t, tg, "fast", bearerHeader(clientKey))
			if err == nil {
				c.CloseNow()
				t.Fatal("upgraded")
			}
			if resp == nil {
				t.Fatalf("no HTTP answer: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("answered after %v", d)
			}
			body, _ := io.ReadAll(resp.Body)
			checkError(t, resp, body, tc.status, tc.code)
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			for i, m := range mocks {
				if m.hits.Load() != tc.hits[i] {
					t.Errorf("answering channel %d was dialed %d times, want %d", i, m.hits.Load(), tc.hits[i])
				}
			}
		})
	}
}
