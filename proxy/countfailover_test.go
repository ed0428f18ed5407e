package proxy_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// countChannel is a counting channel type: its model, a working mock
// answering mockCount, and a mock that answers 503 in the type's shape.
type countChannel struct {
	typ, model string
	working    func(t *testing.T) *mockUpstream
	overloaded []byte
}

var countChannels = []countChannel{
	{"anthropic", "claude-x", anthropicUpstream,
		[]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
	{"gemini", "gemini-x", geminiUpstream,
		[]byte(`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)},
}

// countClient is a client style's token count request and the count in
// its answer.
type countClient struct {
	style  string
	path   func(model string) string
	header map[string]string
	body   func(model string) string
	field  string
}

var countClients = []countClient{
	{"anthropic", func(string) string { return "/v1/messages/count_tokens" },
		map[string]string{"x-api-key": openKey, "anthropic-version": "2023-06-01"},
		func(m string) string {
			return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Hello there, how are you today?"}]}`, m)
		},
		"input_tokens"},
	{"gemini", func(m string) string { return "/v1beta/models/" + m + ":countTokens" },
		map[string]string{"x-goog-api-key": openKey},
		func(string) string {
			return `{"contents":[{"role":"user","parts":[{"text":"Hello there, how are you today?"}]}]}`
		},
		"totalTokens"},
}

// count asks tg for a token count of model in cl's style; it returns the
// X-Rosetta-Token-Count header and the count.
func (cl countClient) count(t *testing.T, tg *testGateway, model string) (string, int) {
	t.Helper()
	resp, body := tg.send(t, "POST", cl.path(model), cl.header, cl.body(model))
	var m map[string]json.RawMessage
	var n int
	if resp.StatusCode != 200 || json.Unmarshal(body, &m) != nil || json.Unmarshal(m[cl.field], &n) != nil || n <= 0 {
		t.Fatalf("status %d, %s: %s, want 200 and a %q", resp.StatusCode, resp.Header.Get("X-Rosetta-Token-Count"), body, cl.field)
	}
	return resp.Header.Get("X-Rosetta-Token-Count"), n
}

// countYAML is a channel of ch's type serving its model at base.
func countYAML(name string, ch countChannel, base string, priority int) string {
	return fmt.Sprintf("  - {name: %s, type: %s, base_url: %q, api_keys: [%s], models: [%s], priority: %d}\n",
		name, ch.typ, base, upstreamKey, ch.model, priority)
}

// TestCountTokensFailsOver: a token count goes to the next channel when the
// first to try is down, as generation does, for each client style and
// counting channel type; only when every channel fails is it estimated.
func TestCountTokensFailsOver(t *testing.T) {
	for _, cl := range countClients {
		for _, ch := range countChannels {
			downs := []struct {
				name string
				base func(t *testing.T) (string, *mockUpstream)
			}{
				{"refused", func(t *testing.T) (string, *mockUpstream) {
					return strings.TrimSuffix(closedPort(t), "/v1"), nil
				}},
				{"503", func(t *testing.T) (string, *mockUpstream) {
					m := newMock(t, jsonReply(503, ch.overloaded))
					return m.srv.URL, m
				}},
			}
			for _, down := range downs {
				t.Run(cl.style+"_client/"+ch.typ+"_channels/first_"+down.name, func(t *testing.T) {
					first, firstMock := down.base(t)
					second := ch.working(t)
					tg := startGateway(t, countYAML("down", ch, first, 0)+countYAML("up", ch, second.srv.URL, 1))
					how, n := cl.count(t, tg, ch.model)
					if firstMock != nil && firstMock.hits.Load() != 1 {
						t.Errorf("the first channel was asked %d times, want once", firstMock.hits.Load())
					}
					if second.hits.Load() != 1 {
						t.Fatalf("the second channel was asked %d times, want once; answer %s %d", second.hits.Load(), how, n)
					}
					if want := mockCount(second.lastRequest().body); how != "upstream" || n != want {
						t.Errorf("count %d (%s), want the second channel's %d (upstream)", n, how, want)
					}
				})
			}
			t.Run(cl.style+"_client/"+ch.typ+"_channels/all_down", func(t *testing.T) {
				busy := newMock(t, jsonReply(503, ch.overloaded))
				tg := startGateway(t, countYAML("down", ch, strings.TrimSuffix(closedPort(t), "/v1"), 0)+
					countYAML("busy", ch, busy.srv.URL, 1))
				if how, n := cl.count(t, tg, ch.model); how != "estimate" {
					t.Errorf("count %d (%s), want an estimate", n, how)
				}
				if busy.hits.Load() > 1 {
					t.Errorf("the second channel was asked %d times", busy.hits.Load())
				}
			})
		}
	}
}
