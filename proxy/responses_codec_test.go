package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// The Responses API translated for channels that do not speak it: the
// official openai-go client against mock Anthropic, Gemini and OpenAI
// chat-completions upstreams, each answering in its own wire format.

// styleFixtures are an upstream style's answers: text, and (for a request
// with tools) thinking and function calls, whole and streamed.
type styleFixtures struct{ text, textStream, tools, toolsStream []byte }

func codecInput(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../codec/testdata/in/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureUpstream answers like its style's API with f: streamed when
// stream says the request asks for it.
func fixtureUpstream(t *testing.T, f styleFixtures, stream func(r *http.Request, body []byte) bool) *mockUpstream {
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		tools := bytes.Contains(body, []byte(`"get_weather"`))
		switch {
		case stream(r, body) && tools:
			streamReply(splitSSE(f.toolsStream), 0)(w, r, body)
		case stream(r, body):
			streamReply(splitSSE(f.textStream), 0)(w, r, body)
		case tools:
			jsonReply(200, f.tools)(w, r, body)
		default:
			jsonReply(200, f.text)(w, r, body)
		}
	})
}

func streamField(_ *http.Request, body []byte) bool {
	return bytes.Contains(body, []byte(`"stream":true`))
}

// responsesGateway serves gpt-4o-mini on an OpenAI chat channel, claude-x
// on an Anthropic one and gemini-x on a Gemini one.
func responsesGateway(t *testing.T, opts proxy.Options) (tg *testGateway, ups map[string]*mockUpstream) {
	oa := fixtureUpstream(t, styleFixtures{fixture(t, "chat_response.json"), fixture(t, "chat_stream.sse"),
		wire(t, "openai/chat_response_tool_calls.json"), wire(t, "openai/chat_stream_tool_calls.sse")}, streamField)
	an := fixtureUpstream(t, styleFixtures{codecInput(t, "anthropic/response_text.json"), wire(t, "anthropic/messages_stream_text.sse"),
		wire(t, "anthropic/messages_response_thinking_tool.json"), wire(t, "anthropic/messages_stream_thinking_tool.sse")}, streamField)
	ge := fixtureUpstream(t, styleFixtures{codecInput(t, "gemini/response_text.json"), wire(t, "gemini/stream_sse_text.sse"),
		wire(t, "gemini/generate_response_function_call.json"), wire(t, "gemini/stream_sse_thinking_function.sse")},
		func(r *http.Request, _ []byte) bool { return strings.HasSuffix(r.URL.Path, ":streamGenerateContent") })
	tg = startGatewayWith(t, channel("oa", oa.baseURL(), "responses: translate")+
		"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n"+
		"  - {name: ge, type: gemini, base_url: \""+ge.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [gemini-x]}\n", opts)
	return tg, map[string]*mockUpstream{"gpt-4o-mini": oa, "claude-x": an, "gemini-x": ge}
}

func responsesClient(tg *testGateway) openai.Client {
	return openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(openKey), option.WithMaxRetries(0))
}

var weatherTools = []responses.ToolUnionParam{
	responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false),
	responses.ToolParamOfFunction("get_local_time", map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false),
}

var responsesModels = []string{"gpt-4o-mini", "claude-x", "gemini-x"}

func TestResponsesTranslatedText(t *testing.T) {
	tg, ups := responsesGateway(t, proxy.Options{})
	client := responsesClient(tg)
	ctx := context.Background()
	for _, model := range responsesModels {
		t.Run(model, func(t *testing.T) {
			r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: model, Instructions: openai.String("Be brief."),
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Tokyo?")}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.ID, "resp_") || r.Model != model || r.Status != "completed" || r.OutputText() == "" ||
				r.Usage.InputTokens == 0 || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
				t.Fatalf("response %s", r.RawJSON())
			}
			if sent := ups[model].lastRequest().body; !bytes.Contains(sent, []byte("Be brief.")) || !bytes.Contains(sent, []byte("Weather in Tokyo?")) {
				t.Errorf("upstream got %s", sent)
			}

			final, deltas := streamResponse(t, client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Tokyo?")}}))
			if final.Status != "completed" || final.OutputText() == "" || deltas != final.OutputText() || final.Usage.InputTokens == 0 {
				t.Errorf("stream: deltas %q, final %s", deltas, final.RawJSON())
			}
		})
	}
}

// streamResponse reads a Responses stream: its events in order (sequence
// numbers from 0), the response its last event gives, and its text deltas
// joined.
func streamResponse(t *testing.T, s interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
}) (*responses.Response, string) {
	t.Helper()
	var text strings.Builder
	var last responses.ResponseStreamEventUnion
	for n := int64(0); s.Next(); n++ {
		ev := s.Current()
		if ev.SequenceNumber != n {
			t.Fatalf("event %d has sequence number %d", n, ev.SequenceNumber)
		}
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
		last = ev
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	switch last.Type {
	case "response.completed", "response.incomplete", "response.failed":
	default:
		t.Fatalf("the stream ended with %q", last.Type)
	}
	return &last.Response, text.String()
}

// TestResponsesTranslatedTools: a function call comes back as
// function_call items (with reasoning items where the upstream thinks),
// and the agent's next turn, those items and its outputs, reaches the
// upstream as its own tool results, signatures included.
func TestResponsesTranslatedTools(t *testing.T) {
	tg, ups := responsesGateway(t, proxy.Options{})
	client := responsesClient(tg)
	ctx := context.Background()
	for _, model := range responsesModels {
		t.Run(model, func(t *testing.T) {
			ask := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser)}
			r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: model, Tools: weatherTools,
				Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortHigh, Summary: shared.ReasoningSummaryAuto},
				Input:     responses.ResponseNewParamsInputUnion{OfInputItemList: ask}})
			if err != nil {
				t.Fatal(err)
			}
			next := append(responses.ResponseInputParam{}, ask...)
			var calls []string
			reasoning := ""
			for _, it := range r.Output {
				switch it.Type {
				case "function_call":
					fc := it.AsFunctionCall()
					p := fc.ToParam()
					next = append(next, responses.ResponseInputItemUnionParam{OfFunctionCall: &p})
					calls = append(calls, fc.CallID)
				case "reasoning":
					rs := it.AsReasoning()
					p := rs.ToParam()
					next = append(next, responses.ResponseInputItemUnionParam{OfReasoning: &p})
					if strings.HasPrefix(rs.EncryptedContent, "rosetta.redacted:") {
						break // Anthropic's redacted thinking: no text
					}
					reasoning = rs.EncryptedContent
					if len(rs.Summary) == 0 || rs.Summary[0].Text == "" {
						t.Errorf("reasoning without its summary: %s", it.RawJSON())
					}
				case "message":
					m := it.AsMessage()
					p := m.ToParam()
					next = append(next, responses.ResponseInputItemUnionParam{OfOutputMessage: &p})
				}
			}
			if len(calls) == 0 {
				t.Fatalf("calls %v in %s", calls, r.RawJSON())
			}
			if model == "claude-x" && !strings.HasPrefix(reasoning, "rosetta:anthropic:") {
				t.Errorf("Anthropic's signature is not tagged with its origin: %q", reasoning)
			}
			for _, id := range calls {
				out := responses.ResponseInputItemParamOfFunctionCallOutput("18 C, clear")
				out.OfFunctionCallOutput.CallID = openai.String(id)
				next = append(next, out)
			}
			if _, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: model, Tools: weatherTools,
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: next}}); err != nil {
				t.Fatal(err)
			}
			sent := string(ups[model].lastRequest().body)
			for _, want := range wantToolTurn(model, reasoning) {
				if !strings.Contains(sent, want) {
					t.Errorf("the upstream's next request lacks %s:\n%s", want, sent)
				}
			}

			final, _ := streamResponse(t, client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: model,
				Tools: weatherTools, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: ask}}))
			n := 0
			for _, it := range final.Output {
				if it.Type == "function_call" {
					n++
				}
			}
			if n == 0 || final.Usage.OutputTokens == 0 {
				t.Errorf("streamed: %s", final.RawJSON())
			}
		})
	}
}

// wantToolTurn is what an upstream of the model's style must find in the
// request that answers its calls.
func wantToolTurn(model, signature string) []string {
	switch model {
	case "claude-x":
		sig := strings.TrimPrefix(signature, "rosetta:anthropic:")
		return []string{`"type":"thinking"`, `"signature":"` + sig + `"`, `"type":"tool_use"`, `"type":"tool_result"`, `"content":"18 C, clear"`}
	case "gemini-x":
		return []string{`"functionCall"`, `"thoughtSignature":"CikBnKam`, `"functionResponse"`, `"output":"18 C, clear"`}
	}
	return []string{`"tool_calls"`, `"role":"tool","tool_call_id":"call_Vd8sL2qNz5RkT1yHbX7mPe4C"`, `"content":"18 C, clear"`}
}

func TestResponsesTranslatedReasoningStream(t *testing.T) {
	tg, _ := responsesGateway(t, proxy.Options{})
	client := responsesClient(tg)
	for _, model := range []string{"claude-x", "gemini-x"} {
		t.Run(model, func(t *testing.T) {
			s := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: model, Tools: weatherTools,
				Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortLow, Summary: shared.ReasoningSummaryAuto},
				Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")}})
			seen := map[string]bool{}
			summary := ""
			for s.Next() {
				ev := s.Current()
				seen[ev.Type] = true
				if ev.Type == "response.reasoning_summary_text.delta" {
					summary += ev.Delta
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			for _, typ := range []string{"response.reasoning_summary_part.added", "response.reasoning_summary_text.done",
				"response.function_call_arguments.done", "response.output_item.done", "response.completed"} {
				if !seen[typ] {
					t.Errorf("no %s event", typ)
				}
			}
			if summary == "" {
				t.Error("no reasoning summary text")
			}
		})
	}
}

func TestResponsesTranslatedStructuredOutput(t *testing.T) {
	tg, ups := responsesGateway(t, proxy.Options{})
	client := responsesClient(tg)
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []string{"city"}, "additionalProperties": false}
	want := map[string]string{"gpt-4o-mini": `"response_format":{"type":"json_schema"`, "claude-x": `"output_config":{"format":{"type":"json_schema"`,
		"gemini-x": `"responseMimeType":"application/json","responseJsonSchema":`}
	for _, model := range responsesModels {
		t.Run(model, func(t *testing.T) {
			r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Where is the Eiffel Tower?")},
				Text:  responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("place", schema)}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Text.Format.Type != "json_schema" || r.Text.Format.Name != "place" {
				t.Errorf("format echoed %s", r.Text.RawJSON())
			}
			if sent := ups[model].lastRequest().body; !bytes.Contains(sent, []byte(want[model])) {
				t.Errorf("upstream got %s", sent)
			}
		})
	}
}

// TestResponsesTranslatedRefusals: what no upstream of these can run is
// refused before any is called, in OpenAI's error shape.
func TestResponsesTranslatedRefusals(t *testing.T) {
	tg, ups := responsesGateway(t, proxy.Options{})
	client := responsesClient(tg)
	ctx := context.Background()
	f := func(params responses.ResponseNewParams, status int, param, code string) {
		t.Helper()
		_, err := client.Responses.New(ctx, params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Param != param || apiErr.Code != code {
			t.Errorf("%+v: %v", params, err)
		}
	}
	hi := responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}
	f(responses.ResponseNewParams{Model: "claude-x", Input: hi,
		Tools: []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)}}, 400, "tools[0].type", "unsupported_tool")
	f(responses.ResponseNewParams{Model: "gemini-x", Input: hi,
		Tools: []responses.ToolUnionParam{weatherTools[0], responses.ToolParamOfFileSearch([]string{"vs_1"})}}, 400, "tools[1].type", "unsupported_tool")
	f(responses.ResponseNewParams{Model: "gpt-4o-mini", Input: hi, PreviousResponseID: openai.String("resp_unknown")},
		400, "previous_response_id", "previous_response_not_found")
	f(responses.ResponseNewParams{Model: "gpt-unknown", Input: hi}, 503, "", "model_not_found")
	for model, up := range ups {
		if up.hits.Load() != 0 {
			t.Errorf("%s was called", model)
		}
	}
}

// TestResponsesTranslatedUsageAndKeep: each exchange is a usage row of the
// Responses style, and what the store should keep of it (its items and
// usage as the API's JSON) is handed to the gateway's keep hook, unless
// the request says store: false.
func TestResponsesTranslatedUsageAndKeep(t *testing.T) {
	st := openStore(t)
	tg, _ := responsesGateway(t, proxy.Options{Store: st, Usage: newUsageWriter(t, st)})
	type kept struct{ status, input, output, usage string }
	var mu sync.Mutex
	keptByID := map[string]kept{}
	proxy.SetKeep(tg.g, func(id, status string, input, output, usage []byte) {
		mu.Lock()
		defer mu.Unlock()
		keptByID[id] = kept{status, string(input), string(output), string(usage)}
	})
	client := responsesClient(tg)
	ctx := context.Background()
	whole, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "claude-x", Tools: weatherTools,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")}})
	if err != nil {
		t.Fatal(err)
	}
	streamed, _ := streamResponse(t, client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gemini-x",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Tokyo?")}}))
	if _, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}}); err != nil {
		t.Fatal(err)
	}

	rows := usageRows(t, st, 3)
	var anRow, geRow store.Usage
	for _, row := range rows {
		if row.ClientStyle != "responses" || row.Status != 200 || row.Input == 0 || row.Output == 0 || row.Endpoint != "responses" {
			t.Errorf("row %+v", row)
		}
		switch row.Channel {
		case "an":
			anRow = row
		case "ge":
			geRow = row
		}
	}
	if anRow.Input != whole.Usage.InputTokens || anRow.Output != whole.Usage.OutputTokens ||
		geRow.Input != streamed.Usage.InputTokens || geRow.Output != streamed.Usage.OutputTokens {
		t.Errorf("rows %+v %+v for usage %+v %+v", anRow, geRow, whole.Usage, streamed.Usage)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(keptByID) != 2 {
		t.Fatalf("kept %d responses, want 2 (store: false keeps none)", len(keptByID))
	}
	for _, r := range []*responses.Response{whole, streamed} {
		k, ok := keptByID[r.ID]
		if !ok {
			t.Fatalf("%s not kept", r.ID)
		}
		var output []responses.ResponseOutputItemUnion
		var usage responses.ResponseUsage
		if k.status != "completed" || !strings.Contains(k.input, `"role":"user"`) ||
			json.Unmarshal([]byte(k.output), &output) != nil || len(output) != len(r.Output) ||
			json.Unmarshal([]byte(k.usage), &usage) != nil || usage.TotalTokens != r.Usage.TotalTokens {
			t.Errorf("kept %+v for %s", k, r.RawJSON())
		}
		for i := range output {
			if output[i].ID != r.Output[i].ID || output[i].Type != r.Output[i].Type {
				t.Errorf("kept item %d is %s %s, the client got %s %s", i, output[i].ID, output[i].Type, r.Output[i].ID, r.Output[i].Type)
			}
		}
	}
}

// TestResponsesTranslatedStreamFailure: an upstream that fails mid-stream
// ends the client's stream with an error event and response.failed, the
// output so far in it, and the kept response is failed.
func TestResponsesTranslatedStreamFailure(t *testing.T) {
	up := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		streamReply(splitSSE(wire(t, "anthropic/messages_stream_error.sse")), 0)(w, r, body)
	})
	tg := startGateway(t, "  - {name: an, type: anthropic, base_url: \""+up.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n")
	var status atomic.Value
	proxy.SetKeep(tg.g, func(_, s string, _, _, _ []byte) { status.Store(s) })
	client := responsesClient(tg)
	s := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "claude-x",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	var types []string
	var last responses.ResponseStreamEventUnion
	for s.Next() {
		last = s.Current()
		types = append(types, last.Type)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	n := len(types)
	if n < 2 || types[n-2] != "error" || types[n-1] != "response.failed" || last.Response.Status != "failed" ||
		last.Response.Error.Code != "server_error" || last.Response.Error.Message == "" {
		t.Fatalf("events %v, last %s", types, last.RawJSON())
	}
	waitFor(t, "the kept response", func() bool { return status.Load() == "failed" })
}

// TestResponsesTranslatedIncomplete: an answer cut by the output limit is
// an incomplete response whose cut item is incomplete too, whole and
// streamed (in its output_item.done and in response.incomplete), as
// OpenAI marks them; and so are the responses the gateway keeps, their
// items, and the reason a GET of them gives.
func TestResponsesTranslatedIncomplete(t *testing.T) {
	up := fixtureUpstream(t, styleFixtures{text: codecInput(t, "anthropic/response_max_tokens.json"),
		textStream: wire(t, "anthropic/messages_stream_max_tokens.sse")}, streamField)
	tg := startGateway(t, "  - {name: an, type: anthropic, base_url: \""+up.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n")
	client := responsesClient(tg)
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: "claude-x", MaxOutputTokens: openai.Int(16),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Tell me about Tokyo.")}}
	whole, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	s := client.Responses.NewStreaming(ctx, params)
	var done []string
	var last responses.ResponseStreamEventUnion
	for s.Next() {
		if last = s.Current(); last.Type == "response.output_item.done" {
			done = append(done, last.Item.Status)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if last.Type != "response.incomplete" || len(done) != 1 || done[0] != "incomplete" {
		t.Errorf("stream: output_item.done statuses %v, last event %s", done, last.RawJSON())
	}
	kept, err := client.Responses.Get(ctx, whole.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	keptStream, err := client.Responses.Get(ctx, last.Response.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*responses.Response{whole, &last.Response, kept, keptStream} {
		if r.Status != "incomplete" || len(r.Output) != 1 || r.Output[0].Type != "message" || r.Output[0].Status != "incomplete" {
			t.Errorf("response %s", r.RawJSON())
		}
	}
	for _, r := range []*responses.Response{whole, &last.Response, kept, keptStream} {
		if r.IncompleteDetails.Reason != "max_output_tokens" {
			t.Errorf("incomplete_details %s", r.IncompleteDetails.RawJSON())
		}
	}
}
