package proxy_test

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// TestDroppedClearedOnFailover: X-Rosetta-Dropped names what the answering
// channel's style could not carry; when a translated attempt (to
// Anthropic, which has no plain JSON mode) fails over to a channel of the
// client's own style, that answer carries everything and says nothing was
// dropped: the header is the attempt's, not the request's. For Responses
// (translated → native) and chat (cross-style → pass-through).
func TestDroppedClearedOnFailover(t *testing.T) {
	var anFails atomic.Bool
	an := failingAnthropic(t, &anFails)
	resp := newRespUpstream(t, "a")
	chat := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGateway(t,
		"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], model_map: {mix: claude-x, chatmix: claude-x}}\n"+
			"  - {name: oa, type: openai, base_url: \""+resp.baseURL()+"\", api_keys: ["+upstreamKey+"], priority: 1, model_map: {mix: gpt-4o}}\n"+
			"  - {name: oc, type: openai, base_url: \""+chat.baseURL()+"\", api_keys: ["+upstreamKey+"], priority: 1, model_map: {chatmix: gpt-4o}}\n")
	for _, c := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"mix","input":"Hi","text":{"format":{"type":"json_object"}}}`},
		{"/v1/chat/completions", `{"model":"chatmix","messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_object"}}`},
	} {
		for _, fails := range []bool{false, true} {
			anFails.Store(fails)
			hits := an.hits.Load()
			r, body := tg.do(t, "POST", c.path, openKey, c.body)
			dropped := r.Header.Get("X-Rosetta-Dropped")
			if r.StatusCode != http.StatusOK || an.hits.Load() != hits+1 || (dropped == "") != fails {
				t.Errorf("%s, Anthropic failing %v: %d, X-Rosetta-Dropped %q: %s", c.path, fails, r.StatusCode, dropped, body)
			}
		}
	}
}
