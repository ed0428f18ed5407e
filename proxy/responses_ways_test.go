package proxy_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// TestResponsesEndpointsFamily: a channel's endpoints name what clients
// may call on it, whatever API the gateway calls upstream. An Anthropic
// channel listing responses but not chat serves translated Responses
// requests (through its Messages API) and no chat client; a Gemini one
// listing chat but not responses serves chat clients and no Responses
// request.
func TestResponsesEndpointsFamily(t *testing.T) {
	an := fixtureUpstream(t, styleFixtures{text: codecInput(t, "anthropic/response_text.json"),
		textStream: wire(t, "anthropic/messages_stream_text.sse")}, streamField)
	ge := fixtureUpstream(t, styleFixtures{text: codecInput(t, "gemini/response_text.json")}, streamField)
	tg := startGateway(t, "  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+
		"], models: [claude-x], endpoints: [responses]}\n"+
		"  - {name: ge, type: gemini, base_url: \""+ge.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [gemini-x], endpoints: [chat]}\n")
	client := responsesClient(tg)
	ctx := context.Background()
	hi := responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}
	chat := func(model string) error {
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}})
		return err
	}

	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "claude-x", Input: hi})
	if err != nil || r.OutputText() == "" || an.lastRequest().path != "/v1/messages" {
		t.Fatalf("Responses on a responses-only channel: %v, upstream path %q", err, an.lastRequest().path)
	}
	final, _ := streamResponse(t, client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "claude-x", Input: hi}))
	if final.Status != "completed" {
		t.Fatalf("streamed: %s", final.RawJSON())
	}
	checkSDKError(t, chat("claude-x"), 503, "endpoint_not_served", "chat")

	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "gemini-x", Input: hi})
	checkSDKError(t, err, 503, "endpoint_not_served", "responses")
	if err := chat("gemini-x"); err != nil {
		t.Fatalf("chat on a chat-only channel: %v", err)
	}
	if n := ge.hits.Load(); n != 1 {
		t.Errorf("the chat-only channel got %d requests, want 1 (the chat one)", n)
	}
}

// failingAnthropic answers like Anthropic (text), or with a 500 while fail
// is set.
func failingAnthropic(t *testing.T, fail *atomic.Bool) *mockUpstream {
	ok := fixtureUpstream(t, styleFixtures{text: codecInput(t, "anthropic/response_text.json"),
		textStream: wire(t, "anthropic/messages_stream_text.sse")}, streamField)
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if fail.Load() {
			jsonReply(500, []byte(`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`))(w, r, body)
			return
		}
		ok.handle(w, r, body)
	})
}

// TestResponsesNativeAndTranslated: a model served by a native channel
// and a translated one (mix: native first; mix2: translated first) fails
// over from one way to the other before the first byte, whole and
// streamed; the response is then the other way's (kept upstream or by the
// gateway, and found by a GET either way). A request only the native way
// can carry goes there. A request that continues a native response stays
// on the channel that made it, failing or not.
func TestResponsesNativeAndTranslated(t *testing.T) {
	oa := newRespUpstream(t, "a")
	var anFails atomic.Bool
	an := failingAnthropic(t, &anFails)
	tg := startGatewayWith(t, "  - {name: oa, type: openai, base_url: \""+oa.baseURL()+"\", api_keys: ["+upstreamKey+"], model_map: {mix: gpt-4o}}\n"+
		"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], priority: 1, model_map: {mix: claude-x}}\n"+
		"  - {name: an2, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], model_map: {mix2: claude-x}}\n"+
		"  - {name: oa2, type: openai, base_url: \""+oa.baseURL()+"\", api_keys: ["+upstreamKey+"], priority: 1, model_map: {mix2: gpt-4o}}\n",
		proxy.Options{Store: openStore(t)})
	client := responsesClient(tg)
	ctx := context.Background()
	params := func(model string) responses.ResponseNewParams {
		return responses.ResponseNewParams{Model: model, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}}
	}
	get := func(r *responses.Response) {
		t.Helper()
		if got, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil || got.OutputText() != r.OutputText() {
			t.Errorf("GET %s: %v", r.ID, err)
		}
	}

	// Each way first when it answers.
	native := create(t, client, params("mix"))
	if !strings.HasPrefix(native.ID, "resp_a") || native.Model != "mix" {
		t.Fatalf("mix: %s", native.RawJSON())
	}
	translated := create(t, client, params("mix2"))
	if strings.HasPrefix(translated.ID, "resp_a") || an.lastRequest().path != "/v1/messages" {
		t.Fatalf("mix2: %s", translated.RawJSON())
	}

	// native → translated, whole and streamed.
	before := an.hits.Load()
	oa.failNext.Store(true)
	r := create(t, client, params("mix"))
	if strings.HasPrefix(r.ID, "resp_a") || r.Model != "mix" || r.OutputText() == "" || an.hits.Load() != before+1 {
		t.Fatalf("after the native channel's 500: %s", r.RawJSON())
	}
	get(r)
	oa.failNext.Store(true)
	final, _ := streamResponse(t, client.Responses.NewStreaming(ctx, params("mix")))
	if final.Status != "completed" || strings.HasPrefix(final.ID, "resp_a") || an.hits.Load() != before+2 {
		t.Fatalf("streamed after the native channel's 500: %s", final.RawJSON())
	}

	// translated → native, whole and streamed.
	anFails.Store(true)
	r = create(t, client, params("mix2"))
	if !strings.HasPrefix(r.ID, "resp_a") || r.Model != "mix2" || r.OutputText() != "Hi there" {
		t.Fatalf("after the translated channel's 500: %s", r.RawJSON())
	}
	get(r)
	final, _ = streamResponse(t, client.Responses.NewStreaming(ctx, params("mix2")))
	if final.Status != "completed" || !strings.HasPrefix(final.ID, "resp_a") || final.Model != "mix2" {
		t.Fatalf("streamed after the translated channel's 500: %s", final.RawJSON())
	}
	anFails.Store(false)

	// A built-in tool, which no translation carries, goes natively even
	// where a translated channel comes first; and when the native channel
	// fails, the client hears of its failure, not of the tool.
	search := params("mix2")
	search.Tools = []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)}
	before = an.hits.Load()
	if r := create(t, client, search); !strings.HasPrefix(r.ID, "resp_a") || an.hits.Load() != before {
		t.Fatalf("web_search on mix2: %s", r.RawJSON())
	}
	search.Model = "mix"
	oa.failNext.Store(true)
	_, err := client.Responses.New(ctx, search)
	apiError(t, err, 500)

	// A continuation of a native response goes to its channel alone.
	before = an.hits.Load()
	oa.failNext.Store(true)
	next := params("mix")
	next.PreviousResponseID = openai.String(native.ID)
	_, err = client.Responses.New(ctx, next)
	apiError(t, err, 500)
	if an.hits.Load() != before {
		t.Errorf("a continuation of %s reached the translated channel", native.ID)
	}
}

func create(t *testing.T, client openai.Client, p responses.ResponseNewParams) *responses.Response {
	t.Helper()
	r, err := client.Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
