package proxy_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// respGateway is a gateway with two native Responses channels and a demo
// channel (translated), its store, and an SDK client of clientKey. The
// public model fast is served by oa1 (two upstream keys, in turn) and,
// after it fails, by oa2; slow and gpt-garbage by oa2 alone.
type respGateway struct {
	*testGateway
	oa1, oa2 *respUpstream
	st       store.Store
	client   openai.Client
}

const (
	upKeyA1 = "sk-up-a1-0123456789"
	upKeyA2 = "sk-up-a2-0123456789"
	upKeyB  = "sk-up-b-0123456789"
)

func startRespGateway(t *testing.T) *respGateway {
	rg := &respGateway{oa1: newRespUpstream(t, "a"), oa2: newRespUpstream(t, "b"), st: openStore(t)}
	rg.testGateway = startGatewayWith(t, `  - {name: oa1, type: openai, base_url: "`+rg.oa1.baseURL()+`", api_keys: [`+upKeyA1+`, `+upKeyA2+`],
      model_map: {fast: gpt-4o-2024-08-06}}
  - {name: oa2, type: openai, base_url: "`+rg.oa2.baseURL()+`", api_keys: [`+upKeyB+`], priority: 1,
      models: [gpt-garbage], model_map: {fast: gpt-4o-2024-08-06, slow: gpt-4o-mini}}
`+demoChannel, proxy.Options{Store: rg.st, Usage: newUsageWriter(t, rg.st)})
	rg.client = rg.clientOf(clientKey)
	return rg
}

func (rg *respGateway) clientOf(key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(rg.url+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func (rg *respGateway) create(t *testing.T, model, previous string) *responses.Response {
	t.Helper()
	p := responses.ResponseNewParams{Model: shared.ResponsesModel(model),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}}
	if previous != "" {
		p.PreviousResponseID = openai.String(previous)
	}
	r, err := rg.client.Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// apiError is err as the SDK's error, with its status and body.
func apiError(t *testing.T, err error, status int) *openai.Error {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) || e.StatusCode != status {
		t.Fatalf("got %v, want an API error with status %d", err, status)
	}
	return e
}

var wantUsage = responses.ResponseUsage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15,
	InputTokensDetails:  responses.ResponseUsageInputTokensDetails{CachedTokens: 2},
	OutputTokensDetails: responses.ResponseUsageOutputTokensDetails{ReasoningTokens: 1}}

func sameUsage(got responses.ResponseUsage) bool {
	return got.InputTokens == wantUsage.InputTokens && got.OutputTokens == wantUsage.OutputTokens &&
		got.InputTokensDetails.CachedTokens == 2 && got.OutputTokensDetails.ReasoningTokens == 1
}

// TestResponsesPassThrough: a Responses request to a native channel is
// relayed with the model mapped, whole and streamed; the answer names the
// public model; its usage makes the usage row; and the gateway remembers
// which channel and upstream key made each response at once, so that a
// GET right after the POST (or the stream) reaches it there; but nothing
// of a response made with store: false.
func TestResponsesPassThrough(t *testing.T) {
	rg := startRespGateway(t)
	ctx := context.Background()

	r := rg.create(t, "fast", "")
	if !strings.HasPrefix(r.ID, "resp_a") || r.Model != "fast" || r.OutputText() != "Hi there" || !sameUsage(r.Usage) {
		t.Fatalf("response %s %s %q %+v", r.ID, r.Model, r.OutputText(), r.Usage)
	}
	if up := rg.oa1.lastRequest(); !strings.Contains(string(up.body), `"model":"gpt-4o-2024-08-06"`) ||
		strings.Contains(string(up.body), "fast") || up.header.Get("Authorization") == "Bearer "+clientKey {
		t.Fatalf("upstream request %s %v", up.body, up.header)
	}
	got, err := rg.client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	if err != nil || got.ID != r.ID || got.Model != "fast" {
		t.Fatalf("GET right after: %v %+v", err, got)
	}

	s := rg.client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "fast",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	var types []string
	var text string
	var done responses.Response
	for s.Next() {
		ev := s.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.created", "response.in_progress":
			if ev.Response.Model != "fast" {
				t.Errorf("%s names model %q", ev.Type, ev.Response.Model)
			}
		case "response.output_text.delta":
			text += ev.Delta
		case "response.completed":
			done = ev.Response
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(types) != 10 || types[0] != "response.created" || text != "Hi there" || done.Model != "fast" || !sameUsage(done.Usage) {
		t.Fatalf("events %v, text %q, completed %+v", types, text, done)
	}
	if _, err := rg.client.Responses.Get(ctx, done.ID, responses.ResponseGetParams{}); err != nil {
		t.Fatalf("GET right after the stream: %v", err)
	}
	// The two responses were made with oa1's two keys in turn, and each
	// GET went with the key that made it (the mock answers 404 to another).
	if k1, k2 := rg.oa1.keyOf(r.ID), rg.oa1.keyOf(done.ID); k1 == k2 || k1 == "" || k2 == "" {
		t.Fatalf("upstream keys %q and %q", k1, k2)
	}

	// store: false: relayed, and nothing remembered.
	unstored, err := rg.client.Responses.New(ctx, responses.ResponseNewParams{Model: "fast", Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	if err != nil || !strings.Contains(string(rg.oa1.lastRequest().body), `"store":false`) {
		t.Fatalf("store false: %v", err)
	}
	_, err = rg.client.Responses.Get(ctx, unstored.ID, responses.ResponseGetParams{})
	apiError(t, err, 404)

	rows := usageRows(t, rg.st, 3)
	for _, row := range rows {
		if row.Model != "fast" || row.Channel != "oa1" || row.Status != 200 || row.Input != 12 || row.Output != 3 ||
			row.Cached != 2 || row.Reasoning != 1 || row.Endpoint != "responses" {
			t.Errorf("usage row %+v", row)
		}
	}
	waitFor(t, "access lines", func() bool { return len(rg.accessLines(t)) >= 6 })
	if l := rg.accessLines(t)[0]; l["endpoint"] != "responses" || l["channel"] != "oa1" || l["model"] != "fast" {
		t.Errorf("access line %v", l)
	}
}

// TestResponsesRouting: the calls on a response (GET, streamed GET,
// input_items with its paging, cancel, DELETE) and a previous_response_id
// reach the channel that made it, whatever the model's priorities say;
// another key finds nothing; a deleted response is gone.
func TestResponsesRouting(t *testing.T) {
	rg := startRespGateway(t)
	ctx := context.Background()
	r := rg.create(t, "slow", "")
	if !strings.HasPrefix(r.ID, "resp_b") {
		t.Fatalf("slow served by %s", r.ID)
	}

	if got, err := rg.client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil || got.Model != "slow" {
		t.Fatalf("GET: %v %+v", err, got)
	}
	s := rg.client.Responses.GetStreaming(ctx, r.ID, responses.ResponseGetParams{})
	n := 0
	for s.Next() {
		if n++; s.Current().Type == "response.created" && s.Current().Response.Model != "slow" {
			t.Errorf("streamed GET names %q", s.Current().Response.Model)
		}
	}
	if s.Err() != nil || n != 10 {
		t.Fatalf("streamed GET: %v, %d events", s.Err(), n)
	}
	page, err := rg.client.Responses.InputItems.List(ctx, r.ID, responses.InputItemListParams{
		Limit: openai.Int(5), Order: responses.InputItemListParamsOrderAsc, After: openai.String("msg_0")})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != "msg_in_"+r.ID {
		t.Fatalf("input items: %v %+v", err, page)
	}
	c, err := rg.client.Responses.Cancel(ctx, r.ID)
	if err != nil || c.Status != "cancelled" || c.Model != "slow" {
		t.Fatalf("cancel: %v %+v", err, c)
	}

	// previous_response_id: fast prefers oa1, but only oa2 knows r.
	next := rg.create(t, "fast", r.ID)
	if !strings.HasPrefix(next.ID, "resp_b") || rg.oa2.keyOf(next.ID) != "Bearer "+upKeyB {
		t.Fatalf("continuation served by %s", next.ID)
	}

	// Another key: OpenAI's 404 (400 for a previous_response_id), and
	// nothing reaches the upstream.
	other := rg.clientOf(openKey)
	before := len(rg.oa2.callsTo(r.ID))
	_, err = other.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	if e := apiError(t, err, 404); e.Message != "Response with id '"+r.ID+"' not found." || e.Type != "invalid_request_error" {
		t.Fatalf("another key's GET: %+v", e)
	}
	apiError(t, other.Responses.Delete(ctx, r.ID), 404)
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "fast", PreviousResponseID: openai.String(r.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	if e := apiError(t, err, 400); e.Code != "previous_response_not_found" || e.Param != "previous_response_id" {
		t.Fatalf("another key's previous_response_id: %+v", e)
	}
	if after := len(rg.oa2.callsTo(r.ID)); after != before {
		t.Fatalf("another key's calls reached the upstream: %v", rg.oa2.callsTo(r.ID))
	}

	if err := rg.client.Responses.Delete(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	_, err = rg.client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	apiError(t, err, 404)

	calls := rg.oa2.callsTo(r.ID)
	want := []string{"GET /v1/responses/" + r.ID + " ", "GET /v1/responses/" + r.ID + "?stream=true ",
		"GET /v1/responses/" + r.ID + "/input_items?after=msg_0&limit=5&order=asc ", "POST /v1/responses/" + r.ID + "/cancel ",
		"DELETE /v1/responses/" + r.ID + " "}
	if len(calls) != len(want) {
		t.Fatalf("oa2 got %q", calls)
	}
	for i, w := range want {
		if calls[i] != w+"Bearer "+upKeyB {
			t.Errorf("call %d: %q, want %q", i, calls[i], w+"Bearer "+upKeyB)
		}
	}
	if got := rg.oa1.callsTo(""); len(got) != 0 {
		t.Errorf("oa1 got %q", got)
	}
}

// TestResponsesFailover: an upstream failing before its first byte fails
// over to the next channel, which then owns the response.
func TestResponsesFailover(t *testing.T) {
	rg := startRespGateway(t)
	rg.oa1.failNext.Store(true)
	r := rg.create(t, "fast", "")
	if !strings.HasPrefix(r.ID, "resp_b") || r.Model != "fast" {
		t.Fatalf("after oa1's 500: %s %s", r.ID, r.Model)
	}
	if _, err := rg.client.Responses.Get(context.Background(), r.ID, responses.ResponseGetParams{}); err != nil {
		t.Fatal(err)
	}
	if len(rg.oa2.callsTo(r.ID)) != 1 || len(rg.oa1.callsTo("")) != 1 {
		t.Fatalf("oa1 %q, oa2 %q", rg.oa1.callsTo(""), rg.oa2.callsTo(""))
	}
}

// TestResponsesBadInput: a malformed body and a missing model are 400s in
// OpenAI's shape; an upstream stream that breaks ends with the API's error
// event; a model with no native channel is translated, and the gateway
// keeps the response.
func TestResponsesBadInput(t *testing.T) {
	rg := startRespGateway(t)
	resp, body := rg.do(t, "POST", "/v1/responses", clientKey, `{"model":"fast","input":"Hi"`)
	checkError(t, resp, body, 400, "")
	resp, body = rg.do(t, "POST", "/v1/responses", clientKey, `{"input":"Hi"}`)
	checkError(t, resp, body, 400, "")
	resp, body = rg.do(t, "GET", "/v1/responses/..%2Fmodels", clientKey, "")
	checkError(t, resp, body, 404, "")

	s := rg.client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "gpt-garbage",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	var last responses.ResponseStreamEventUnion
	n := 0
	for s.Next() {
		last, n = s.Current(), n+1
	}
	if s.Err() != nil || n != 5 || last.Type != "error" || last.Code != "upstream_error" {
		t.Fatalf("%v after %d events, last %+v", s.Err(), n, last)
	}

	// demo has no native channel: translated, and kept by the gateway.
	r := rg.create(t, "demo", "")
	if r.Model != "demo" || r.OutputText() == "" {
		t.Fatalf("translated: %+v", r)
	}
	if got, err := rg.client.Responses.Get(context.Background(), r.ID, responses.ResponseGetParams{}); err != nil ||
		got.OutputText() != r.OutputText() {
		t.Fatalf("GET of a kept response: %v %+v", err, got)
	}
}

// TestResponsesInputTokens: a count goes to a native channel and is the
// upstream's; a model without one gets the gateway's estimate, said so. A
// previous_response_id is counted where it lives: a native one by the
// channel and key that made it, a kept one with its conversation (a
// larger estimate); another key's is the API's 400.
func TestResponsesInputTokens(t *testing.T) {
	rg := startRespGateway(t)
	count := func(client openai.Client, model, previous string) (int64, string, error) {
		t.Helper()
		p := responses.InputTokenCountParams{Model: openai.String(model), Input: responses.InputTokenCountParamsInputUnion{
			OfString: openai.String("How many tokens is this?")}}
		if previous != "" {
			p.PreviousResponseID = openai.String(previous)
		}
		var raw *http.Response
		n, err := client.Responses.InputTokens.Count(context.Background(), p, option.WithResponseInto(&raw))
		if err != nil {
			return 0, "", err
		}
		return n.InputTokens, raw.Header.Get("X-Rosetta-Token-Count"), nil
	}
	for _, c := range []struct {
		model, label string
		want         int64
	}{{"fast", "upstream", 42}, {"demo", "estimate", 10}} { // the estimate: 24 bytes and a turn
		if n, label, err := count(rg.client, c.model, ""); err != nil || n != c.want || label != c.label {
			t.Fatalf("%s: %v %d %q", c.model, err, n, label)
		}
	}

	native := rg.create(t, "fast", "")
	for range 2 { // where the channel's keys would otherwise take turns
		if n, label, err := count(rg.client, "fast", native.ID); err != nil || n != 42 || label != "upstream" {
			t.Fatalf("a native previous response: %v %d %q", err, n, label)
		}
		calls := rg.oa1.callsTo("")
		if last := calls[len(calls)-1]; !strings.HasPrefix(last, "POST /v1/responses/input_tokens ") ||
			!strings.HasSuffix(last, rg.oa1.keyOf(native.ID)) {
			t.Fatalf("the count of a native conversation went %q", last)
		}
	}
	kept := rg.create(t, "demo", "")
	if n, label, err := count(rg.client, "demo", kept.ID); err != nil || n <= 10 || label != "estimate" {
		t.Fatalf("a kept previous response: %v %d %q", err, n, label)
	}
	_, _, err := count(rg.clientOf(openKey), "fast", native.ID)
	if e := apiError(t, err, 400); e.Code != "previous_response_not_found" {
		t.Errorf("another key's response: %s", e.RawJSON())
	}
}

// TestResponsesRetention: retention deletes what the gateway remembers of
// old responses: their calls are then 404s.
func TestResponsesRetention(t *testing.T) {
	rg := startRespGateway(t)
	r := rg.create(t, "fast", "")
	waitFor(t, "the response in the store", func() bool {
		_, err := rg.st.Response(context.Background(), r.ID)
		return err == nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deleted := make(chan int64, 1)
	go store.PruneResponses(ctx, rg.st, -time.Hour, time.Hour, func(n int64, err error) {
		if err == nil {
			deleted <- n
		}
	})
	if n := <-deleted; n != 1 {
		t.Fatalf("retention deleted %d", n)
	}
	resp, body := rg.do(t, "GET", "/v1/responses/"+r.ID, clientKey, "")
	checkError(t, resp, body, 404, "")
}
