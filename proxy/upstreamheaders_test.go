package proxy_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// upstreamHeaders are what each provider sends with a successful answer
// that a client needs: its request id, OpenAI's processing time, and the
// quota (42 requests left of 100, 29000 tokens of 30000); Gemini sends none
// of them. Every provider also sends what must never reach a client.
func upstreamHeaders(typ string) map[string]string {
	h := map[string]string{
		"Set-Cookie":          "session=upstream-secret; Path=/",
		"Authorization":       "Bearer upstream-secret",
		"Proxy-Authenticate":  "Basic realm=upstream-secret",
		"X-Api-Key":           "upstream-secret",
		"Openai-Organization": "org-upstream-secret",
		"Openai-Project":      "proj_upstream-secret",
		"X-Internal-Shard":    "upstream-secret",
	}
	switch typ {
	case "openai":
		h["X-Request-Id"] = "req_openai_1"
		h["Openai-Processing-Ms"] = "321"
		h["X-Ratelimit-Limit-Requests"], h["X-Ratelimit-Remaining-Requests"], h["X-Ratelimit-Reset-Requests"] = "100", "42", "6s"
		h["X-Ratelimit-Limit-Tokens"], h["X-Ratelimit-Remaining-Tokens"], h["X-Ratelimit-Reset-Tokens"] = "30000", "29000", "2s"
	case "anthropic":
		h["Request-Id"] = "req_anthropic_1"
		h["Anthropic-Organization-Id"] = "upstream-secret-org"
		reset := time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339)
		h["Anthropic-Ratelimit-Requests-Limit"], h["Anthropic-Ratelimit-Requests-Remaining"], h["Anthropic-Ratelimit-Requests-Reset"] = "100", "42", reset
		h["Anthropic-Ratelimit-Tokens-Limit"], h["Anthropic-Ratelimit-Tokens-Remaining"], h["Anthropic-Ratelimit-Tokens-Reset"] = "30000", "29000", reset
	}
	return h
}

// withHeaders answers as reply does, with the headers set first, their
// names spelled as h spells them.
func withHeaders(h map[string]string, reply func(http.ResponseWriter, *http.Request, []byte)) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		for k, v := range h {
			w.Header()[k] = []string{v}
		}
		reply(w, r, body)
	}
}

// spellings are the ways upstreams spell header names: as Go's net/http
// and most HTTP/1.1 servers do, and in lower case (uvicorn, which serves
// vLLM, and the names of HTTP/2 that some proxies keep).
var spellings = map[string]func(string) string{"canonical": http.CanonicalHeaderKey, "lower": strings.ToLower}

// spelled is h with its names spelled by spell.
func spelled(h map[string]string, spell func(string) string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[spell(k)] = v
	}
	return out
}

// clientHeaders are the only headers a client may get with an answer: the
// gateway's own, and what it passes on of the upstream's.
func clientHeaders(name string) bool {
	switch name {
	case "Content-Type", "Content-Length", "Date", "Server", "Transfer-Encoding", "Cache-Control", "X-Accel-Buffering",
		"X-Request-Id", "X-Upstream-Request-Id", "Openai-Processing-Ms":
		return true
	}
	return strings.HasPrefix(name, "X-Ratelimit-") || strings.HasPrefix(name, "Anthropic-Ratelimit-") ||
		strings.HasPrefix(name, "X-Rosetta-")
}

// An upstream's successful answer, whole or streamed, tells every client
// style the upstream's request id (X-Upstream-Request-Id, beside the
// gateway's own X-Request-Id), OpenAI's processing time (OpenAI clients
// only), and the upstream's quota in the client's header names; nothing
// else of the upstream's headers reaches the client. The upstream's names
// are found however it spells them.
func TestUpstreamHeadersReachClient(t *testing.T) {
	for spelling, spell := range spellings {
		for _, typ := range []string{"openai", "anthropic", "gemini"} {
			upstreamHeadersReachClient(t, spelling, typ, spelled(upstreamHeaders(typ), spell))
		}
	}
}

// upstreamHeadersReachClient is TestUpstreamHeadersReachClient for one
// channel type whose upstream sends the headers sent.
func upstreamHeadersReachClient(t *testing.T, spelling, typ string, sent map[string]string) {
	up := newMock(t, withHeaders(sent, streamedOrWhole(streamReply(wireStream(t, typ), 0), jsonReply(200, wireWhole(t, typ)))))
	tg := startGateway(t, faultChannels(typ, "talky", up.srv.URL))
	for _, cl := range mappingClients() {
		t.Run(spelling+"/"+cl.style+"_client/"+typ+"_channel/"+cl.mode, func(t *testing.T) {
			resp, body := tg.send(t, "POST", cl.path("talky"), cl.header, cl.body("talky"))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			h := resp.Header
			wantID := map[string]string{"openai": "req_openai_1", "anthropic": "req_anthropic_1"}[typ]
			if got := h.Get("X-Upstream-Request-Id"); got != wantID {
				t.Errorf("X-Upstream-Request-Id %q, want %q", got, wantID)
			}
			if id := h.Get("X-Request-Id"); id == "" || id == wantID {
				t.Errorf("X-Request-Id %q, want the gateway's own", id)
			}
			wantMs := ""
			if cl.style == "openai" && typ == "openai" {
				wantMs = "321"
			}
			if got := h.Get("Openai-Processing-Ms"); got != wantMs {
				t.Errorf("Openai-Processing-Ms %q, want %q", got, wantMs)
			}
			remaining := map[string][2]string{
				"openai":    {"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Remaining-Tokens"},
				"anthropic": {"Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Tokens-Remaining"},
			}[cl.style]
			want := [2]string{"42", "29000"}
			if typ == "gemini" {
				want = [2]string{}
			}
			if cl.style != "gemini" && (h.Get(remaining[0]) != want[0] || h.Get(remaining[1]) != want[1]) {
				t.Errorf("%s %q, %s %q, want %q", remaining[0], h.Get(remaining[0]), remaining[1], h.Get(remaining[1]), want)
			}
			for name, v := range h {
				ownStyle := map[string]string{"openai": "X-Ratelimit-", "anthropic": "Anthropic-Ratelimit-"}[cl.style]
				quota := strings.HasPrefix(name, "X-Ratelimit-") || strings.HasPrefix(name, "Anthropic-Ratelimit-")
				if !clientHeaders(name) || (quota && (ownStyle == "" || !strings.HasPrefix(name, ownStyle))) ||
					strings.Contains(strings.Join(v, ","), "upstream-secret") {
					t.Errorf("the client got %s: %q", name, v)
				}
			}
		})
	}
}

// A key with limits of its own is told them, not the upstream's quota:
// they are what it must respect.
func TestKeyLimitsWinOverUpstreamQuota(t *testing.T) {
	up := newMock(t, withHeaders(upstreamHeaders("openai"), jsonReply(200, wireWhole(t, "openai"))))
	for _, cl := range mappingClients() {
		if cl.mode != "non_stream" || cl.style == "gemini" {
			continue
		}
		t.Run(cl.style, func(t *testing.T) {
			tg := startGateway(t, faultChannels("openai", "talky", up.srv.URL)) // a fresh count for the key's 2 rpm
			header := map[string]string{}
			for k, v := range cl.header {
				header[k] = strings.Replace(v, openKey, limitedKey, 1)
			}
			resp, body := tg.send(t, "POST", cl.path("talky"), header, cl.body("talky"))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			names := map[string][3]string{
				"openai":    {"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Limit-Tokens"},
				"anthropic": {"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Tokens-Limit"},
			}[cl.style]
			h := resp.Header
			if h.Get(names[0]) != "2" || h.Get(names[1]) != "1" || h.Get(names[2]) != "" {
				t.Errorf("%s %q, %s %q, %s %q: want the key's 2 requests, 1 left, and no token quota",
					names[0], h.Get(names[0]), names[1], h.Get(names[1]), names[2], h.Get(names[2]))
			}
			if h.Get("X-Upstream-Request-Id") != "req_openai_1" {
				t.Errorf("X-Upstream-Request-Id %q", h.Get("X-Upstream-Request-Id"))
			}
		})
	}
}

// An upstream's error answer, relayed to the client (its 400) or the last
// of the failover (its 500), names the upstream's request id too, in every
// client style; the other headers of the answer stay behind. A channel
// that failed over to one that answered leaves no id of its own behind.
func TestUpstreamRequestIDOnErrors(t *testing.T) {
	bodies := map[string]string{
		"openai":    `{"error":{"message":"bad thing","type":"invalid_request_error"}}`,
		"anthropic": `{"type":"error","error":{"type":"invalid_request_error","message":"bad thing"}}`,
	}
	for _, typ := range []string{"openai", "anthropic"} {
		for _, status := range []int{400, 500} {
			up := newMock(t, withHeaders(upstreamHeaders(typ), jsonReply(status, []byte(bodies[typ]))))
			tg := startGateway(t, faultChannels(typ, "talky", up.srv.URL))
			for _, cl := range mappingClients() {
				t.Run(fmt.Sprintf("%s_client/%s_channel/%d/%s", cl.style, typ, status, cl.mode), func(t *testing.T) {
					resp, body := tg.send(t, "POST", cl.path("talky"), cl.header, cl.body("talky"))
					if resp.StatusCode != status || !strings.Contains(string(body), "bad thing") {
						t.Fatalf("status %d: %s", resp.StatusCode, body)
					}
					wantID := map[string]string{"openai": "req_openai_1", "anthropic": "req_anthropic_1"}[typ]
					if got := resp.Header.Get("X-Upstream-Request-Id"); got != wantID {
						t.Errorf("X-Upstream-Request-Id %q, want %q", got, wantID)
					}
					for name, v := range resp.Header {
						if strings.Contains(strings.Join(v, ","), "upstream-secret") {
							t.Errorf("the client got %s: %q", name, v)
						}
					}
				})
			}
		}
	}
	failing := newMock(t, withHeaders(upstreamHeaders("openai"), jsonReply(500, []byte(bodies["openai"]))))
	quiet := newMock(t, jsonReply(200, wireWhole(t, "openai")))
	tg := startGateway(t, faultChannels("openai", "talky", failing.srv.URL, quiet.srv.URL))
	resp, body := tg.send(t, "POST", "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + openKey},
		`{"model":"talky","messages":[{"role":"user","content":"Hi"}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("X-Upstream-Request-Id") != "" || failing.hits.Load() != 1 {
		t.Errorf("after failover: %d, X-Upstream-Request-Id %q, %s", resp.StatusCode, resp.Header.Get("X-Upstream-Request-Id"), body)
	}
}
