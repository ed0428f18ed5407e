package proxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// mappedChannel is a channel of one type serving alias under the upstream
// name up, with a mock that answers real wire transcripts in which the
// model is renamed to up.
type mappedChannel struct {
	typ, alias, up string
	mock           *mockUpstream
	mu             sync.Mutex
	uri            string // the request URI of the last request
}

func (c *mappedChannel) lastURI() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uri
}

// renamed is the wire transcript name with every occurrence of the
// model from replaced by to; the rest stays byte for byte.
func renamed(t *testing.T, name, from, to string) []byte {
	t.Helper()
	b := wire(t, name)
	if !bytes.Contains(b, []byte(from)) {
		t.Fatalf("%s does not name %s", name, from)
	}
	return bytes.ReplaceAll(b, []byte(from), []byte(to))
}

// newMappedChannel starts the mock of a channel of type typ. It answers
// only requests that name the upstream model, in the body (OpenAI,
// Anthropic) or the path (Gemini), and always with its own model name.
func newMappedChannel(t *testing.T, typ, alias, up string) *mappedChannel {
	c := &mappedChannel{typ: typ, alias: alias, up: up}
	var whole []byte
	var stream [][]byte
	wantPath := func(bool) string { return "/v1/chat/completions" }
	switch typ {
	case "openai":
		whole = renamed(t, "openai/chat_response_tool_calls.json", "gpt-5-mini-2025-08-07", up)
		stream = splitSSE(renamed(t, "openai/chat_stream_length.sse", "gpt-4.1-mini-2025-04-14", up))
	case "anthropic":
		whole = renamed(t, "anthropic/messages_response_thinking_tool.json", "claude-3-7-sonnet-20250219", up)
		stream = splitSSE(renamed(t, "anthropic/messages_stream_text.sse", "claude-haiku-4-5-20251001", up))
		wantPath = func(bool) string { return "/v1/messages" }
	case "gemini":
		whole = renamed(t, "gemini/generate_response_function_call.json", "gemini-2.5-flash", up)
		stream = splitSSE(renamed(t, "gemini/stream_sse_text.sse", "gemini-2.5-flash", up))
		wantPath = func(streaming bool) string {
			if streaming {
				return "/v1beta/models/" + up + ":streamGenerateContent?alt=sse"
			}
			return "/v1beta/models/" + up + ":generateContent"
		}
	}
	c.mock = newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		c.mu.Lock()
		c.uri = r.URL.RequestURI()
		c.mu.Unlock()
		streaming := bytes.Contains(body, []byte(`"stream":true`)) || strings.Contains(r.URL.Path, ":streamGenerateContent")
		var sent struct{ Model string }
		json.Unmarshal(body, &sent)
		if r.URL.RequestURI() != wantPath(streaming) || (typ != "gemini" && sent.Model != up) {
			jsonReply(404, []byte(`{"error":{"message":"unexpected request"}}`))(w, r, body)
			return
		}
		if streaming {
			streamReply(stream, 0)(w, r, body)
			return
		}
		jsonReply(200, whole)(w, r, body)
	})
	return c
}

func (c *mappedChannel) yaml() string {
	base := c.mock.srv.URL
	if c.typ == "openai" {
		base = c.mock.baseURL()
	}
	return fmt.Sprintf("  - {name: %s, type: %s, base_url: %q, api_keys: [%s], model_map: {%s: %s}}\n",
		c.typ, c.typ, base, upstreamKey, c.alias, c.up)
}

// eventData is the data of each event of an SSE body, [DONE] aside.
func eventData(body []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			if d = bytes.TrimSpace(d); string(d) != "[DONE]" {
				out = append(out, append([]byte(nil), d...))
			}
		}
	}
	return out
}

// stringsAt decodes each JSON document and returns the string at path in it
// ("" where missing); an undecodable document fails the test.
func stringsAt(t *testing.T, docs [][]byte, path ...string) []string {
	t.Helper()
	var out []string
	for _, d := range docs {
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Errorf("not JSON (%v): %s", err, d)
			continue
		}
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// mappingClient is one way a client asks for a completion: what it sends,
// and the model names its answer shows (one per place the style has one).
type mappingClient struct {
	style, mode string
	path        func(alias string) string
	header      map[string]string
	body        func(alias string) string
	shown       func(t *testing.T, body []byte) []string
}

func mappingClients() []mappingClient {
	oaBody := func(stream bool) func(string) string {
		return func(alias string) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"Hi"}]}`, alias, stream)
		}
	}
	anBody := func(stream bool) func(string) string {
		return func(alias string) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"max_tokens":100,"messages":[{"role":"user","content":"Hi"}]}`, alias, stream)
		}
	}
	geBody := func(string) string { return `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}` }
	gePath := func(method string) func(string) string {
		return func(alias string) string { return "/v1beta/models/" + alias + method }
	}
	fixed := func(p string) func(string) string { return func(string) string { return p } }
	oaHeader := map[string]string{"Authorization": "Bearer " + openKey}
	anHeader := map[string]string{"x-api-key": openKey, "anthropic-version": "2023-06-01"}
	geHeader := map[string]string{"x-goog-api-key": openKey}
	whole := func(key string) func(*testing.T, []byte) []string {
		return func(t *testing.T, b []byte) []string { return stringsAt(t, [][]byte{b}, key) }
	}
	return []mappingClient{
		{"openai", "non_stream", fixed("/v1/chat/completions"), oaHeader, oaBody(false), whole("model")},
		{"openai", "stream", fixed("/v1/chat/completions"), oaHeader, oaBody(true),
			func(t *testing.T, b []byte) []string { return stringsAt(t, eventData(b), "model") }},
		{"anthropic", "non_stream", fixed("/v1/messages"), anHeader, anBody(false), whole("model")},
		{"anthropic", "stream", fixed("/v1/messages"), anHeader, anBody(true),
			func(t *testing.T, b []byte) []string {
				var starts [][]byte
				for _, d := range eventData(b) {
					if bytes.Contains(d, []byte(`"message_start"`)) {
						starts = append(starts, d)
					}
				}
				if len(starts) != 1 {
					t.Errorf("%d message_start events", len(starts))
				}
				return stringsAt(t, starts, "message", "model")
			}},
		{"gemini", "non_stream", gePath(":generateContent"), geHeader, geBody, whole("modelVersion")},
		{"gemini", "stream", gePath(":streamGenerateContent?alt=sse"), geHeader, geBody,
			func(t *testing.T, b []byte) []string { return stringsAt(t, eventData(b), "modelVersion") }},
		{"gemini", "stream_array", gePath(":streamGenerateContent"), geHeader, geBody,
			func(t *testing.T, b []byte) []string {
				var arr []json.RawMessage
				if err := json.Unmarshal(b, &arr); err != nil {
					t.Errorf("not a JSON array: %v", err)
				}
				docs := make([][]byte, len(arr))
				for i, d := range arr {
					docs[i] = d
				}
				return stringsAt(t, docs, "modelVersion")
			}},
	}
}

// TestModelMapping: a public alias mapped to an upstream name, on a channel
// of each type, asked in each client style, streamed or not. The upstream
// is asked under its own name, and the client only ever sees the alias:
// same-style pairs are the pass-through path, the others are translated.
func TestModelMapping(t *testing.T) {
	for _, cl := range mappingClients() {
		for _, typ := range []string{"openai", "anthropic", "gemini"} {
			t.Run(cl.style+"_client/"+typ+"_channel/"+cl.mode, func(t *testing.T) {
				chans := map[string]*mappedChannel{
					"openai":    newMappedChannel(t, "openai", "alias-oa", "gpt-up-1"),
					"anthropic": newMappedChannel(t, "anthropic", "alias-claude", "claude-up-1"),
					"gemini":    newMappedChannel(t, "gemini", "alias-gem", "gemini-up-1"),
				}
				tg := startGateway(t, chans["openai"].yaml()+chans["anthropic"].yaml()+chans["gemini"].yaml())
				ch := chans[typ]

				resp, body := tg.send(t, "POST", cl.path(ch.alias), cl.header, cl.body(ch.alias))
				if resp.StatusCode != 200 {
					t.Fatalf("status %d (upstream asked %q): %s", resp.StatusCode, ch.lastURI(), body)
				}
				if ch.mock.hits.Load() != 1 {
					t.Errorf("the %s mock was asked %d times, want once", typ, ch.mock.hits.Load())
				}
				if typ == "gemini" {
					want := "/v1beta/models/gemini-up-1:generateContent"
					if cl.mode != "non_stream" {
						want = "/v1beta/models/gemini-up-1:streamGenerateContent?alt=sse"
					}
					if got := ch.lastURI(); got != want {
						t.Errorf("Gemini upstream asked %q, want %q", got, want)
					}
				}
				for _, c := range chans {
					if i := bytes.Index(body, []byte(c.up)); i >= 0 {
						t.Errorf("the upstream name %s leaks to the client: %q", c.up, body[max(i-60, 0):min(i+len(c.up)+20, len(body))])
					}
				}
				shown := cl.shown(t, body)
				if len(shown) == 0 {
					t.Errorf("the answer shows no model: %s", body)
				}
				for i, m := range shown {
					if m != ch.alias {
						t.Errorf("model #%d shown is %q, want the alias %q", i, m, ch.alias)
					}
				}
			})
		}
	}
}
