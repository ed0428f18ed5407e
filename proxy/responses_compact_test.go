package proxy_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

func compactParams(model, previous string) responses.ResponseCompactParams {
	p := responses.ResponseCompactParams{Model: responses.ResponseCompactParamsModel(model),
		Input: responses.ResponseCompactParamsInputUnion{OfString: openai.String("Hi")}}
	if previous != "" {
		p.PreviousResponseID = openai.String(previous)
	}
	return p
}

// TestResponsesCompact: openai-go's Responses.Compact reaches a native
// channel with the model mapped, and its compacted output and usage come
// back (the usage counted); a previous_response_id goes to the channel
// and upstream key that made it; a model served only by translation, a
// conversation the gateway keeps, and another key's response are the
// API's 400s, and nothing goes upstream for them.
func TestResponsesCompact(t *testing.T) {
	rg := startRespGateway(t)
	ctx := context.Background()
	c, err := rg.client.Responses.Compact(ctx, compactParams("fast", ""))
	if err != nil {
		t.Fatal(err)
	}
	last := c.Output[len(c.Output)-1]
	if !strings.HasPrefix(c.ID, "resp_a") || last.Type != "compaction" || last.EncryptedContent == "" ||
		c.Usage.InputTokens != 120 || c.Usage.OutputTokens != 40 {
		t.Fatalf("compacted: %s", c.RawJSON())
	}
	if sent := rg.oa1.lastRequest(); sent.path != "/v1/responses/compact" ||
		!strings.Contains(string(sent.body), `"model":"gpt-4o-2024-08-06"`) {
		t.Fatalf("sent %s %s", sent.path, sent.body)
	}
	waitFor(t, "the access line", func() bool {
		for _, l := range rg.accessLines(t) {
			if l["endpoint"] == "responses.compact" && l["input_tokens"] == 120.0 && l["output_tokens"] == 40.0 {
				return true
			}
		}
		return false
	})

	// Pinned: twice, where the channel's keys would otherwise take turns.
	r := rg.create(t, "fast", "")
	for range 2 {
		if _, err := rg.client.Responses.Compact(ctx, compactParams("fast", r.ID)); err != nil {
			t.Fatal(err)
		}
		if calls := rg.oa1.callsTo(""); !strings.HasSuffix(calls[len(calls)-1], rg.oa1.keyOf(r.ID)) {
			t.Fatalf("a compaction of %s went with another key: %v", r.ID, calls)
		}
	}

	before := rg.oa1.hits.Load() + rg.oa2.hits.Load()
	kept := rg.create(t, "demo", "")
	for what, p := range map[string]responses.ResponseCompactParams{
		"a translated model": compactParams("demo", ""), "a kept conversation": compactParams("fast", kept.ID)} {
		_, err := rg.client.Responses.Compact(ctx, p)
		if e := apiError(t, err, 400); e.Code != "unsupported_endpoint" || !strings.Contains(e.Message, "/v1/responses/compact") {
			t.Errorf("%s: %s", what, e.RawJSON())
		}
	}
	other := rg.clientOf(openKey)
	_, err = other.Responses.Compact(ctx, compactParams("fast", r.ID))
	if e := apiError(t, err, 400); e.Code != "previous_response_not_found" {
		t.Errorf("another key's response: %s", e.RawJSON())
	}
	if n := rg.oa1.hits.Load() + rg.oa2.hits.Load(); n != before {
		t.Errorf("%d requests went upstream for compactions refused", n-before)
	}
}

// TestResponsesCompactSkipsTranslated: a model whose first channel
// translates the API is compacted by its native one.
func TestResponsesCompactSkipsTranslated(t *testing.T) {
	var anFails atomic.Bool
	an := failingAnthropic(t, &anFails)
	oa := newRespUpstream(t, "a")
	tg := startGateway(t,
		"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], model_map: {mix: claude-x}}\n"+
			"  - {name: oa, type: openai, base_url: \""+oa.baseURL()+"\", api_keys: ["+upstreamKey+"], priority: 1, model_map: {mix: gpt-4o}}\n")
	client := responsesClient(tg)
	c, err := client.Responses.Compact(context.Background(), compactParams("mix", ""))
	if err != nil || c.Output[len(c.Output)-1].Type != "compaction" || an.hits.Load() != 0 || oa.hits.Load() != 1 {
		t.Fatalf("%v; Anthropic asked %d times, OpenAI %d", err, an.hits.Load(), oa.hits.Load())
	}
}
