package proxy_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// upstreamReply is one provider's answer, in its own words.
type upstreamReply struct {
	status int
	header map[string]string
	body   string
}

func (u upstreamReply) serve(w http.ResponseWriter, _ *http.Request, _ []byte) {
	for k, v := range u.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(u.status)
	w.Write([]byte(u.body))
}

// rateLimited is each provider's 429, waiting wait seconds, with a request
// quota of 100 of which none is left.
func rateLimited(typ string, wait int) upstreamReply {
	switch typ {
	case "anthropic":
		return upstreamReply{429, map[string]string{"retry-after": fmt.Sprint(wait),
			"anthropic-ratelimit-requests-limit": "100", "anthropic-ratelimit-requests-remaining": "0",
			"anthropic-ratelimit-requests-reset": time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339)},
			`{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit."}}`}
	case "gemini":
		return upstreamReply{429, nil, fmt.Sprintf(`{"error":{"code":429,"message":"Resource has been exhausted.",`+
			`"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"%ds"}]}}`, wait)}
	}
	return upstreamReply{429, map[string]string{"retry-after": fmt.Sprint(wait),
		"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6s"},
		`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`}
}

// faultChannels is a channel of type typ serving alias on each base URL,
// the first tried first.
func faultChannels(typ, alias string, bases ...string) string {
	var b strings.Builder
	for i, base := range bases {
		if typ == "openai" {
			base += "/v1"
		}
		fmt.Fprintf(&b, "  - {name: %s%d, type: %s, base_url: %q, api_keys: [%s], models: [up-model], model_map: {%s: up-model}, priority: %d, breaker: {failures: 1000}}\n",
			typ, i, typ, base, upstreamKey, alias, i)
	}
	return b.String()
}

// An upstream's 429 reaches every client style with how long to wait (the
// shortest wait among the channels that answered 429) and what the upstream
// said of its quota, in the client's own words.
func TestUpstream429ReachesClient(t *testing.T) {
	for _, typ := range []string{"openai", "anthropic", "gemini"} {
		slow := newMock(t, rateLimited(typ, 30).serve)
		fast := newMock(t, rateLimited(typ, 7).serve)
		tg := startGateway(t, faultChannels(typ, "busy", slow.srv.URL, fast.srv.URL))
		for _, cl := range mappingClients() {
			if cl.mode != "non_stream" && cl.mode != "stream" {
				continue
			}
			t.Run(cl.style+"_client/"+typ+"_channel/"+cl.mode, func(t *testing.T) {
				resp, body := tg.send(t, "POST", cl.path("busy"), cl.header, cl.body("busy"))
				if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
					t.Fatalf("status %d, Retry-After %q, want 429 and the shorter wait, 7: %s",
						resp.StatusCode, resp.Header.Get("Retry-After"), body)
				}
				quota := map[string]string{"openai": "X-Ratelimit-Limit-Requests",
					"anthropic": "Anthropic-Ratelimit-Requests-Limit"}[cl.style]
				if quota != "" && typ != "gemini" && resp.Header.Get(quota) != "100" {
					t.Errorf("%s %q, want the upstream's 100", quota, resp.Header.Get(quota))
				}
				if cl.style == "gemini" && !strings.Contains(string(body), `"retryDelay":"7s"`) {
					t.Errorf("no RetryInfo of 7s in %s", body)
				}
			})
		}
	}
}

// Anthropic's 529 (overloaded) is a status only Anthropic sends: clients of
// the other styles get 503 in their words, with the upstream's message.
func TestOverloadedStatusInClientTerms(t *testing.T) {
	up := newMock(t, upstreamReply{529, nil,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}.serve)
	tg := startGateway(t, faultChannels("anthropic", "claude-busy", up.srv.URL))
	want := map[string]struct {
		status int
		shape  string
	}{
		"openai":    {503, `"type":"server_error"`},
		"anthropic": {529, `"type":"overloaded_error"`},
		"gemini":    {503, `"status":"UNAVAILABLE"`},
	}
	for _, cl := range mappingClients() {
		if cl.mode != "non_stream" {
			continue
		}
		t.Run(cl.style, func(t *testing.T) {
			resp, body := tg.send(t, "POST", cl.path("claude-busy"), cl.header, cl.body("claude-busy"))
			w := want[cl.style]
			if resp.StatusCode != w.status || !strings.Contains(string(body), w.shape) || !strings.Contains(string(body), "Overloaded") {
				t.Errorf("%d %s, want %d with %s and the upstream's message", resp.StatusCode, body, w.status, w.shape)
			}
		})
	}
}

// wireStream is a real stream transcript of each channel type, as events.
func wireStream(t *testing.T, typ string) [][]byte {
	name := map[string]string{"openai": "openai/chat_stream_length.sse",
		"anthropic": "anthropic/messages_stream_text.sse", "gemini": "gemini/stream_sse_text.sse"}[typ]
	return splitSSE(wire(t, name))
}

// wireWhole is a real whole answer of each channel type.
func wireWhole(t *testing.T, typ string) []byte {
	return wire(t, map[string]string{"openai": "openai/chat_response_tool_calls.json",
		"anthropic": "anthropic/messages_response_thinking_tool.json", "gemini": "gemini/generate_response_function_call.json"}[typ])
}

// garbled answers 200 with what is not JSON: a whole answer, or a stream
// whose events are the provider's own but for one, in the middle.
func garbled(t *testing.T, typ string) func(http.ResponseWriter, *http.Request, []byte) {
	evs := wireStream(t, typ)
	cut := max(len(evs)-2, 1)
	stream := append(append(append([][]byte{}, evs[:cut]...), []byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"\n\n")), evs[cut:]...)
	return streamedOrWhole(streamReply(stream, 0), jsonReply(200, []byte("<html><body>502 Bad Gateway</body></html>")))
}

// streamedOrWhole answers a request for a stream (stream true in its body,
// or Gemini's :streamGenerateContent) with stream, any other with whole.
func streamedOrWhole(stream, whole func(http.ResponseWriter, *http.Request, []byte)) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.Contains(string(body), `"stream":true`) || strings.Contains(r.URL.Path, ":stream") {
			stream(w, r, body)
			return
		}
		whole(w, r, body)
	}
}

// An upstream that answers 200 with garbage has failed: a whole answer is a
// 502 in the client's style (or the next channel's answer), a stream ends
// with an error event in the client's style and no success terminator.
func TestUpstreamGarbage(t *testing.T) {
	ends := map[string]string{"openai": "[DONE]", "anthropic": "message_stop", "gemini": `"finishReason"`}
	fails := map[string]string{"openai": `"error"`, "anthropic": "event: error", "gemini": `"error"`}
	for _, typ := range []string{"openai", "anthropic", "gemini"} {
		bad := newMock(t, garbled(t, typ))
		good := newMock(t, jsonReply(200, wireWhole(t, typ)))
		tg := startGateway(t, faultChannels(typ, "garbled", bad.srv.URL)+
			strings.ReplaceAll(faultChannels(typ, "saved", bad.srv.URL, good.srv.URL), typ+"0", typ+"x"))
		for _, cl := range mappingClients() {
			t.Run(cl.style+"_client/"+typ+"_channel/"+cl.mode, func(t *testing.T) {
				resp, body := tg.send(t, "POST", cl.path("garbled"), cl.header, cl.body("garbled"))
				if cl.mode == "non_stream" {
					if resp.StatusCode != 502 || !strings.Contains(string(body), "could not be read") {
						t.Errorf("%d %s, want 502: the upstream's answer could not be read", resp.StatusCode, body)
					}
					resp, body = tg.send(t, "POST", cl.path("saved"), cl.header, cl.body("saved"))
					if resp.StatusCode != 200 {
						t.Errorf("with a good second channel: %d %s", resp.StatusCode, body)
					}
					return
				}
				if resp.StatusCode != 200 || !strings.Contains(string(body), fails[cl.style]) ||
					!strings.Contains(string(body), "could not be read") || strings.Contains(string(body), ends[cl.style]) {
					t.Errorf("%d, want a stream that ends in an error event and without %s:\n%s", resp.StatusCode, ends[cl.style], body)
				}
			})
		}
	}
}
