package proxy_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// Streams whose events repeat their model and usage keys, spell them with
// escapes and nest a usage where it does not count, byte for byte as each
// provider frames its events: a client's JSON parser reads the last
// top-level occurrence of a key, decoded.
var (
	repeatedKeysOpenAI = dataEvents(
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-a","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-a","mod\u0065l":"up-b","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-a","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":99}}],"usage":null}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-a","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1},`+
			`"us\u0061ge":{"prompt_tokens":19,"completion_tokens":8,"completion_tokens_details":{"reasoning_tokens":"x","reasoning_tokens":2}},"model":"up-c"}`,
		`[DONE]`)
	repeatedKeysAnthropic = "event: message_start\ndata: " +
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"up-a","content":[],"stop_reason":null,"stop_sequence":null,` +
		`"usage":{"input_tokens":1,"output_tokens":1},"mod\u0065l":"up-b","us\u0061ge":{"input_tokens":21,"cache_read_input_tokens":4,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: " +
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null,"usage":{"output_tokens":99}},` +
		`"usage":{"output_tokens":"x","input_tokens":500},"usage":{"output_t\u006fkens":9}}` + "\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	repeatedKeysGemini = dataEvents(
		`{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"totalTokenCount":6},"modelVersion":"up-a","responseId":"r1"}`,
		`{"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","index":0}],`+
			`"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2},"modelVersion":"up-a",`+
			`"us\u0061geMetadata":{"promptTokenCount":"x","promptTokenCount":17,"candidatesTokenCount":6,"totalTokenCount":23},"m\u006fdelVersion":"up-b","responseId":"r1"}`)
)

// dataEvents frames each data as a server-sent event.
func dataEvents(data ...string) string {
	return "data: " + strings.Join(data, "\n\n"+"data: ") + "\n\n"
}

// repeatedKeysGateway serves a channel of each type whose upstream
// streams the given stream, with a store for the usage rows.
func repeatedKeysGateway(t *testing.T) (*testGateway, *watchedStore) {
	reply := func(stream string) *mockUpstream {
		return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(stream))
		})
	}
	oa, an, ge := reply(repeatedKeysOpenAI), reply(repeatedKeysAnthropic), reply(repeatedKeysGemini)
	st := openStore(t)
	tg := startGatewayWith(t, channel("oa", oa.baseURL(), "model_map: {pub: gpt-4o-mini}")+
		"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x], model_map: {claude-pub: claude-x}}\n"+
		"  - {name: ge, type: gemini, base_url: \""+ge.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [gemini-x], model_map: {gemini-pub: gemini-x}}\n",
		proxy.Options{Store: st, Usage: newUsageWriter(t, st)})
	return tg, st
}

// onlyRow is the one usage row of the store.
func onlyRow(t *testing.T, st store.Store) store.Usage {
	t.Helper()
	for _, r := range usageRows(t, st, 1) {
		return r
	}
	return store.Usage{}
}

// TestRelayedStreamsBillWhatSDKsRead: each official SDK, streaming
// through the pass-through relay of its own style, reads the public model
// name in every event and the usage the gateway bills, where the events
// repeat and escape their keys.
func TestRelayedStreamsBillWhatSDKsRead(t *testing.T) {
	ctx := context.Background()
	t.Run("openai", func(t *testing.T) {
		tg, st := repeatedKeysGateway(t)
		client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(openKey), option.WithMaxRetries(0))
		s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         "pub",
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
			if m := s.Current().Model; m != "pub" || strings.Contains(s.Current().RawJSON(), `"up-`) {
				t.Fatalf("chunk with model %q: %s", m, s.Current().RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		u := acc.Usage
		row := onlyRow(t, st)
		if u.PromptTokens != 19 || u.CompletionTokens != 8 || u.CompletionTokensDetails.ReasoningTokens != 2 ||
			row.Input != int64(u.PromptTokens) || row.Output != int64(u.CompletionTokens) || row.Reasoning != int64(u.CompletionTokensDetails.ReasoningTokens) {
			t.Errorf("the SDK read %+v, the row %+v", u, row)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		tg, st := repeatedKeysGateway(t)
		client := anthropic.NewClient(aoption.WithBaseURL(tg.url), aoption.WithAPIKey(openKey), aoption.WithMaxRetries(0))
		s := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model: "claude-pub", MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))},
		})
		var acc anthropic.Message
		for s.Next() {
			if err := acc.Accumulate(s.Current()); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(s.Current().RawJSON(), `"up-`) {
				t.Fatalf("an upstream model name left: %s", s.Current().RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		u := acc.Usage
		row := onlyRow(t, st)
		if acc.Model != "claude-pub" || u.InputTokens != 21 || u.CacheReadInputTokens != 4 || u.OutputTokens != 9 ||
			row.Input != int64(u.InputTokens+u.CacheReadInputTokens) || row.Cached != int64(u.CacheReadInputTokens) || row.Output != int64(u.OutputTokens) {
			t.Errorf("the SDK read model %q, %+v; the row %+v", acc.Model, u, row)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		tg, st := repeatedKeysGateway(t)
		client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: openKey, Backend: genai.BackendGeminiAPI,
			HTTPOptions: genai.HTTPOptions{BaseURL: tg.url}})
		if err != nil {
			t.Fatal(err)
		}
		var last *genai.GenerateContentResponse
		for r, err := range client.Models.GenerateContentStream(ctx, "gemini-pub", genai.Text("Hi"), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if r.ModelVersion != "gemini-pub" {
				t.Fatalf("chunk with model %q", r.ModelVersion)
			}
			last = r
		}
		row := onlyRow(t, st)
		if last == nil || last.UsageMetadata == nil {
			t.Fatal("no usage in the stream")
		}
		u := last.UsageMetadata
		if u.PromptTokenCount != 17 || u.CandidatesTokenCount != 6 || row.Input != int64(u.PromptTokenCount) || row.Output != int64(u.CandidatesTokenCount) {
			t.Errorf("the SDK read %+v, the row %+v", u, row)
		}
	})
}

// Whole answers whose model and usage repeat, one spelled with escapes:
// the Go SDKs read the first of a repeated key, encoding/json the last.
const (
	repeatedAnswerOpenAI = `{"id":"c1","object":"chat.completion","created":1,"model":"up-a",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":1,"completion_tokens":1},"mod\u0065l":"up-b","usage":{"prompt_tokens":19,"completion_tokens":8}}`
	repeatedAnswerAnthropic = `{"id":"msg_1","type":"message","role":"assistant","model":"up-a","content":[{"type":"text","text":"Hi"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1},` +
		`"model":"up-b","us\u0061ge":{"input_tokens":21,"output_tokens":9,"output_tokens":7}}`
)

// TestRelayedAnswersBillWhatSDKsRead: each Go SDK that reads the first of
// a repeated key, through the pass-through relay of its own style, reads
// the public model name and the usage the gateway bills of a whole answer
// whose keys repeat.
func TestRelayedAnswersBillWhatSDKsRead(t *testing.T) {
	ctx := context.Background()
	// gateway serves channels whose upstream answers answer.
	gateway := func(answer, channels string) (*testGateway, *watchedStore) {
		up := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(answer))
		})
		st := openStore(t)
		return startGatewayWith(t, fmt.Sprintf(channels, up.srv.URL), proxy.Options{Store: st, Usage: newUsageWriter(t, st)}), st
	}

	tg, st := gateway(repeatedAnswerOpenAI, channel("oa", "%s/v1", "model_map: {pub: gpt-4o-mini}"))
	oc := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(openKey), option.WithMaxRetries(0))
	c, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "pub", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if row := onlyRow(t, st); c.Model != "pub" || c.Usage.PromptTokens != 19 || c.Usage.CompletionTokens != 8 ||
		strings.Contains(c.RawJSON(), `"up-`) || row.Input != c.Usage.PromptTokens || row.Output != c.Usage.CompletionTokens {
		t.Errorf("the OpenAI SDK read model %q, %+v; the row %+v", c.Model, c.Usage, row)
	}

	tg, st = gateway(repeatedAnswerAnthropic,
		"  - {name: an, type: anthropic, base_url: \"%s\", api_keys: ["+upstreamKey+"], models: [claude-x], model_map: {claude-pub: claude-x}}\n")
	ac := anthropic.NewClient(aoption.WithBaseURL(tg.url), aoption.WithAPIKey(openKey), aoption.WithMaxRetries(0))
	m, err := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-pub", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	if row := onlyRow(t, st); m.Model != "claude-pub" || m.Usage.InputTokens != 21 || m.Usage.OutputTokens != 7 ||
		strings.Contains(m.RawJSON(), `"up-`) || row.Input != m.Usage.InputTokens || row.Output != m.Usage.OutputTokens {
		t.Errorf("the Anthropic SDK read model %q, %+v; the row %+v", m.Model, m.Usage, row)
	}
}
