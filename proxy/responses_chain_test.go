package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// Signatures minted by the mock upstreams (codec/testdata/wire): each
// may reach only the provider that minted it.
const (
	anthropicSig       = "Eqv9zXELMnefIfLgIVBdJNcskw8fQJzsOF" // messages_response_thinking_tool.json's thinking
	anthropicRedacted  = "EmwKAhgBEgyFrHsBFaaPtwkFwt1"        // its redacted thinking
	anthropicSigStream = "Eq8EoCC9K8zFr52j6UHbyNS9igrRHK"     // messages_stream_thinking_tool.sse's
	geminiSig          = "CikBnKamKgWmIGusdvDsqAROMbTG"       // generate_response_function_call.json's
)

// TestResponsesChainAcrossChannels: one conversation continued by
// previous_response_id turn after turn on channels of three types, each
// translated: Anthropic (thinking with a signature, redacted thinking, a
// function call), then Gemini, then Anthropic again, streamed, then an
// OpenAI chat-completions channel. Each upstream gets the whole
// conversation so far in its own format, and only its own signatures.
func TestResponsesChainAcrossChannels(t *testing.T) {
	tg, ups := responsesGateway(t, proxy.Options{Store: openStore(t)})
	client := responsesClient(tg)

	r1 := create(t, client, responses.ResponseNewParams{Model: "claude-x", Tools: weatherTools,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")}})
	wantSent(t, "turn 1 (Anthropic)", sentTo(ups["claude-x"]), []string{"Weather in Paris?"}, nil)

	r2 := create(t, client, responses.ResponseNewParams{Model: "gemini-x", Tools: weatherTools,
		PreviousResponseID: openai.String(r1.ID), Input: callOutputs(t, r1, "18 C, clear")})
	wantSent(t, "turn 2 (Gemini)", sentTo(ups["gemini-x"]),
		[]string{`"text":"Weather in Paris?"`, `"text":"Checking Tokyo's weather now."`,
			`"functionCall":{"id":"toolu_01Kd2NxR7bQw4TyE9cVm1sPa","name":"get_weather","args":{"city":"Tokyo","unit":"celsius"}}`,
			`"functionResponse":{"id":"toolu_01Kd2NxR7bQw4TyE9cVm1sPa","name":"get_weather","response":{"output":"18 C, clear"}}`},
		[]string{anthropicSig, anthropicRedacted})

	final, _ := streamResponse(t, client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "claude-x",
		Tools: weatherTools, PreviousResponseID: openai.String(r2.ID), Input: callOutputs(t, r2, "9 C, rain")}))
	wantSent(t, "turn 3 (Anthropic, streamed)", sentTo(ups["claude-x"]),
		[]string{`"content":"Weather in Paris?"`, `"signature":"` + anthropicSig, `"data":"` + anthropicRedacted,
			`"text":"Checking Tokyo's weather now."`, `"type":"tool_use"`, `"name":"get_local_time"`,
			`"id":"gcall_kQ8hacKDNbGd1MkPq7uJgQw_0","name":"get_weather","input":{"city":"Paris","unit":"celsius"}`,
			`"tool_use_id":"gcall_kQ8hacKDNbGd1MkPq7uJgQw_0","content":"9 C, rain"`, `"content":"18 C, clear"`},
		[]string{geminiSig})
	if final.Status != "completed" || final.PreviousResponseID != r2.ID {
		t.Fatalf("turn 3: %s", final.RawJSON())
	}

	r4 := create(t, client, responses.ResponseNewParams{Model: "gpt-4o-mini", Tools: weatherTools,
		PreviousResponseID: openai.String(final.ID), Input: callOutputs(t, final, "20:05")})
	wantSent(t, "turn 4 (OpenAI chat)", sentTo(ups["gpt-4o-mini"]),
		[]string{`"content":"Weather in Paris?"`, `"content":"Checking Tokyo's weather now."`, `"name":"get_weather"`,
			`"name":"get_local_time"`, `"role":"tool"`, `"content":"18 C, clear"`, `"content":"9 C, rain"`, `"content":"20:05"`},
		[]string{anthropicSig, anthropicRedacted, anthropicSigStream, geminiSig})
	if r4.Status != "completed" || len(r4.Output) == 0 {
		t.Fatalf("turn 4: %s", r4.RawJSON())
	}
}

// sentTo is the body of the last request up got.
func sentTo(up *mockUpstream) string { return string(up.lastRequest().body) }

// callOutputs answers every function call of r with output.
func callOutputs(t *testing.T, r *responses.Response, output string) responses.ResponseNewParamsInputUnion {
	t.Helper()
	var in responses.ResponseInputParam
	for _, it := range r.Output {
		if it.Type == "function_call" {
			out := responses.ResponseInputItemParamOfFunctionCallOutput(output)
			out.OfFunctionCallOutput.CallID = openai.String(it.CallID)
			in = append(in, out)
		}
	}
	if len(in) == 0 {
		t.Fatalf("no function call in %s", r.RawJSON())
	}
	return responses.ResponseNewParamsInputUnion{OfInputItemList: in}
}

// wantSent checks that an upstream's request holds every one of want and
// none of banned.
func wantSent(t *testing.T, turn, sent string, want, banned []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(sent, w) {
			t.Errorf("%s: the upstream's request lacks %s:\n%s", turn, w, sent)
		}
	}
	for _, b := range banned {
		if strings.Contains(sent, b) {
			t.Errorf("%s: the upstream's request holds another provider's signature %s:\n%s", turn, b, sent)
		}
	}
}
