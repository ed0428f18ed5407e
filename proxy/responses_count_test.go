package proxy_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// TestResponsesInputTokensTranslated: a Responses count of a model on an
// Anthropic or Gemini channel is that provider's own count, asked at its
// count endpoint in its style (what the mocks answer is not the gateway's
// estimate); a model on a chat-only channel, which has no count endpoint,
// gets the estimate without a call upstream; and so does a model whose
// provider's count fails. A conversation the gateway keeps is counted
// whole.
func TestResponsesInputTokensTranslated(t *testing.T) {
	oa := newMock(t, jsonReply(500, []byte(`{"error":{"message":"not here","type":"server_error"}}`)))
	down := newMock(t, jsonReply(500, []byte(`{"type":"error","error":{"type":"api_error","message":"boom"}}`)))
	an, ge := anthropicUpstream(t), geminiUpstream(t)
	tg := startGateway(t, channel("oa", oa.baseURL(), "responses: translate")+
		"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n"+
		"  - {name: ge, type: gemini, base_url: \""+ge.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [gemini-x]}\n"+
		"  - {name: down, type: anthropic, base_url: \""+down.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-down]}\n")
	client := responsesClient(tg)
	count := func(model string) (int64, string) {
		t.Helper()
		var raw *http.Response
		n, err := client.Responses.InputTokens.Count(context.Background(), responses.InputTokenCountParams{
			Model:        openai.String(model),
			Instructions: openai.String("Be brief."),
			Input: responses.InputTokenCountParamsInputUnion{
				OfString: openai.String("How many tokens is this?")}}, option.WithResponseInto(&raw))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		return n.InputTokens, raw.Header.Get("X-Rosetta-Token-Count")
	}
	for _, c := range []struct {
		model, path, prefix string
		up                  *mockUpstream
	}{
		{"claude-x", "/v1/messages/count_tokens", `{"model":"claude-x",`, an},
		{"gemini-x", "/v1beta/models/gemini-x:countTokens", `{"generateContentRequest":{"model":"models/gemini-x",`, ge},
	} {
		n, label := count(c.model)
		sent := c.up.lastRequest()
		if label != "upstream" || n != int64(mockCount(sent.body)) {
			t.Errorf("%s: count %d (%s), want the provider's %d", c.model, n, label, mockCount(sent.body))
		}
		if sent.path != c.path || !bytes.HasPrefix(sent.body, []byte(c.prefix)) ||
			!bytes.Contains(sent.body, []byte("Be brief.")) || !bytes.Contains(sent.body, []byte("How many tokens is this?")) ||
			bytes.Contains(sent.body, []byte("max_tokens")) {
			t.Errorf("%s: sent %s %s", c.model, sent.path, sent.body)
		}
	}
	// A conversation the gateway keeps is counted with its items first.
	r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "claude-x",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Remember the word pelican.")}})
	if err != nil {
		t.Fatal(err)
	}
	var raw *http.Response
	n, err := client.Responses.InputTokens.Count(context.Background(), responses.InputTokenCountParams{
		Model: openai.String("claude-x"), PreviousResponseID: openai.String(r.ID),
		Input: responses.InputTokenCountParamsInputUnion{OfString: openai.String("And now?")}}, option.WithResponseInto(&raw))
	sent := an.lastRequest()
	if err != nil || raw.Header.Get("X-Rosetta-Token-Count") != "upstream" || n.InputTokens != int64(mockCount(sent.body)) ||
		sent.path != "/v1/messages/count_tokens" || !bytes.Contains(sent.body, []byte("pelican")) ||
		!bytes.Contains(sent.body, []byte("And now?")) {
		t.Errorf("the count of a kept conversation: %v; sent %s %s", err, sent.path, sent.body)
	}

	if n, label := count("gpt-4o-mini"); label != "estimate" || n < 1 || oa.hits.Load() != 0 {
		t.Errorf("chat-only: %d (%s), %d calls upstream", n, label, oa.hits.Load())
	}
	if n, label := count("claude-down"); label != "estimate" || n < 1 || down.hits.Load() != 1 {
		t.Errorf("a failing count: %d (%s), %d calls upstream", n, label, down.hits.Load())
	}
	if strings.Contains(tg.logs.String(), upstreamKey) {
		t.Error("the upstream key is in the logs")
	}
}

// TestResponsesInputTokensTagged: a count holding a signature the gateway
// tagged goes to a channel that translates the API, never to a native
// one, which could not read it.
func TestResponsesInputTokensTagged(t *testing.T) {
	oa, an := newRespUpstream(t, "a"), anthropicUpstream(t)
	tg := startGateway(t,
		"  - {name: oa, type: openai, base_url: \""+oa.baseURL()+"\", api_keys: ["+upstreamKey+"], model_map: {mix: gpt-4o}}\n"+
			"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], priority: 1, model_map: {mix: claude-x}}\n")
	r, body := tg.do(t, "POST", "/v1/responses/input_tokens", openKey, `{"model":"mix","input":[`+
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"Thinking."}],"encrypted_content":"rosetta:anthropic:EqQBc2ln"},`+
		`{"role":"user","content":"Hi"}]}`)
	if r.StatusCode != 200 || r.Header.Get("X-Rosetta-Token-Count") != "upstream" || oa.hits.Load() != 0 ||
		an.lastRequest().path != "/v1/messages/count_tokens" {
		t.Fatalf("%d %q, OpenAI asked %d times: %s", r.StatusCode, r.Header.Get("X-Rosetta-Token-Count"), oa.hits.Load(), body)
	}
}
