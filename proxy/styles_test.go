package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"
)

// wire reads a provider transcript from codec/testdata/wire.
func wire(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../codec/testdata/wire/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// splitSSE splits a transcript into events whatever its line endings.
func splitSSE(b []byte) [][]byte {
	sep := []byte("\n\n")
	if bytes.Contains(b, []byte("\r\n\r\n")) {
		sep = []byte("\r\n\r\n")
	}
	var out [][]byte
	for _, ev := range bytes.SplitAfter(b, sep) {
		if len(bytes.TrimSpace(ev)) > 0 {
			out = append(out, ev)
		}
	}
	return out
}

// anthropicUpstream answers like Anthropic's Messages API.
func anthropicUpstream(t *testing.T) *mockUpstream {
	whole := wire(t, "anthropic/messages_response_thinking_tool.json")
	stream := splitSSE(wire(t, "anthropic/messages_stream_text.sse"))
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path == "/v1/messages/count_tokens" && r.Header.Get("x-api-key") == upstreamKey {
			jsonReply(200, fmt.Appendf(nil, `{"input_tokens":%d}`, mockCount(body)))(w, r, body)
			return
		}
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != upstreamKey || r.Header.Get("anthropic-version") == "" {
			jsonReply(404, []byte(`{"type":"error","error":{"type":"not_found_error","message":"bad path or auth"}}`))(w, r, body)
			return
		}
		if bytes.Contains(body, []byte(`"stream":true`)) {
			streamReply(stream, 0)(w, r, body)
			return
		}
		jsonReply(200, whole)(w, r, body)
	})
}

// geminiUpstream answers like the Gemini API.
func geminiUpstream(t *testing.T) *mockUpstream {
	whole := wire(t, "gemini/generate_response_function_call.json")
	stream := splitSSE(wire(t, "gemini/stream_sse_text.sse"))
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Header.Get("x-goog-api-key") != upstreamKey || !strings.HasPrefix(r.URL.Path, "/v1beta/models/gemini-x:") {
			jsonReply(404, []byte(`{"error":{"code":404,"message":"bad path or auth","status":"NOT_FOUND"}}`))(w, r, body)
			return
		}
		if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") && r.URL.Query().Get("alt") == "sse" {
			streamReply(stream, 0)(w, r, body)
			return
		}
		if strings.HasSuffix(r.URL.Path, ":countTokens") {
			jsonReply(200, fmt.Appendf(nil, "{\n  \"totalTokens\": %d\n}\n", mockCount(body)))(w, r, body)
			return
		}
		jsonReply(200, whole)(w, r, body)
	})
}

// mockCount is the token count the mock providers give for a request
// body: not the gateway's estimate, so a test tells the two apart.
func mockCount(body []byte) int { return 1000 + len(body) }

// styledGateway serves an OpenAI channel (model gpt-4o-mini), an Anthropic
// one (claude-x) and a Gemini one (gemini-x).
func styledGateway(t *testing.T) (tg *testGateway, oa, an, ge *mockUpstream) {
	oa = newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Contains(body, []byte(`"stream":true`)) {
			streamReply(events(fixture(t, "chat_stream.sse")), 0)(w, r, body)
			return
		}
		jsonReply(200, fixture(t, "chat_response.json"))(w, r, body)
	})
	an, ge = anthropicUpstream(t), geminiUpstream(t)
	tg = startGateway(t, channel("oa", oa.baseURL(), "")+
		"  - {name: an, type: anthropic, base_url: \""+an.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n"+
		"  - {name: ge, type: gemini, base_url: \""+ge.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [gemini-x]}\n")
	return tg, oa, an, ge
}

func TestOpenAIClientToOtherStyles(t *testing.T) {
	tg, _, an, ge := styledGateway(t)
	client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(openKey), option.WithMaxRetries(0))
	ctx := context.Background()
	for _, tc := range []struct {
		model string
		up    *mockUpstream
		text  string // in the non-streamed answer
	}{
		{"claude-x", an, "Checking Tokyo's weather now."},
		{"gemini-x", ge, ""},
	} {
		t.Run(tc.model, func(t *testing.T) {
			c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    openai.ChatModel(tc.model),
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather in Tokyo?")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.Model != tc.model || len(c.Choices) != 1 || c.Usage.PromptTokens == 0 {
				t.Fatalf("completion %+v", c)
			}
			if calls := c.Choices[0].Message.ToolCalls; len(calls) == 0 || c.Choices[0].FinishReason != "tool_calls" {
				t.Errorf("tool calls %+v, finish %q", calls, c.Choices[0].FinishReason)
			}
			if tc.text != "" && !strings.Contains(c.Choices[0].Message.Content, tc.text) {
				t.Errorf("content %q", c.Choices[0].Message.Content)
			}
			var sent map[string]any
			if err := json.Unmarshal(tc.up.lastRequest().body, &sent); err != nil {
				t.Fatalf("upstream body: %v", err)
			}
			if _, isOpenAI := sent["messages"].([]any); tc.model == "gemini-x" && isOpenAI {
				t.Errorf("Gemini upstream got an OpenAI body: %s", tc.up.lastRequest().body)
			}

			s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model:         openai.ChatModel(tc.model),
				Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Tokyo?")},
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				acc.AddChunk(s.Current())
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if len(acc.Choices) == 0 || acc.Choices[0].Message.Content == "" || acc.Usage.PromptTokens == 0 {
				t.Errorf("stream gave %+v", acc.ChatCompletion)
			}
		})
	}
}

func TestAnthropicClient(t *testing.T) {
	tg, oa, an, _ := styledGateway(t)
	client := anthropic.NewClient(aoption.WithBaseURL(tg.url), aoption.WithAPIKey(openKey), aoption.WithMaxRetries(0))
	ctx := context.Background()
	for _, model := range []string{"gpt-4o-mini", "claude-x", "gemini-x"} {
		t.Run(model, func(t *testing.T) {
			msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
				Model:     anthropic.Model(model),
				MaxTokens: 1024,
				System:    []anthropic.TextBlockParam{{Text: "Be brief."}},
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))},
			})
			if err != nil {
				t.Fatal(err)
			}
			// Unmapped, a same-style answer keeps the upstream's own model name.
			if (model != "claude-x" && string(msg.Model) != model) || len(msg.Content) == 0 || msg.Usage.InputTokens == 0 || msg.StopReason == "" {
				t.Fatalf("message %+v", msg)
			}
			s := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
				Model:     anthropic.Model(model),
				MaxTokens: 1024,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))},
			})
			var acc anthropic.Message
			started := false
			for s.Next() {
				ev := s.Current()
				if ev.Type == "message_start" {
					started = true
					if ev.Message.Usage.InputTokens == 0 {
						t.Error("message_start says input_tokens 0")
					}
				}
				if err := acc.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if !started || len(acc.Content) == 0 || acc.Content[0].Text == "" || acc.StopReason == "" || acc.Usage.OutputTokens == 0 {
				t.Errorf("stream gave %+v", acc)
			}
		})
	}
	// Same style: the body reaches Anthropic as the client sent it, model aside.
	body := `{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"Hi"}],"metadata":{"user_id":"u1"}}`
	req, _ := http.NewRequest("POST", tg.url+"/v1/messages", strings.NewReader(body))
	req.Header.Set("x-api-key", openKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("pass-through: %v %v", err, resp)
	}
	if got := string(an.lastRequest().body); got != body {
		t.Errorf("pass-through body %s", got)
	}
	_ = oa
}

func TestGeminiClient(t *testing.T) {
	tg, _, ge, _ := styledGateway(t)
	_ = ge
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey: openKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: tg.url},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"gpt-4o-mini", "claude-x", "gemini-x"} {
		t.Run(model, func(t *testing.T) {
			res, err := client.Models.GenerateContent(ctx, model, genai.Text("Hi"),
				&genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) == 0 || res.UsageMetadata == nil || res.UsageMetadata.PromptTokenCount == 0 {
				t.Fatalf("response %+v", res)
			}
			text := ""
			for r, err := range client.Models.GenerateContentStream(ctx, model, genai.Text("Hi"), nil) {
				if err != nil {
					t.Fatal(err)
				}
				text += r.Text()
			}
			if text == "" {
				t.Error("stream gave no text")
			}
		})
	}
}

func TestErrorsInEachStyle(t *testing.T) {
	tg, _, _, _ := styledGateway(t)
	post := func(path string, hdr map[string]string, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", tg.url+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	anthropicErr := func(status int, m map[string]any, wantStatus int, wantType string) {
		t.Helper()
		e, _ := m["error"].(map[string]any)
		if status != wantStatus || m["type"] != "error" || e["type"] != wantType || e["message"] == "" {
			t.Errorf("status %d body %v, want %d %s in Anthropic's shape", status, m, wantStatus, wantType)
		}
	}
	msg := `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"Hi"}]}`
	v := map[string]string{"anthropic-version": "2023-06-01"}
	s, m := post("/v1/messages", v, msg)
	anthropicErr(s, m, 401, "authentication_error")
	s, m = post("/v1/messages", map[string]string{"x-api-key": openKey}, msg)
	anthropicErr(s, m, 400, "invalid_request_error")
	s, m = post("/v1/messages", map[string]string{"x-api-key": openKey, "anthropic-version": "1999-01-01"}, msg)
	anthropicErr(s, m, 400, "invalid_request_error")
	s, m = post("/v1/messages", map[string]string{"x-api-key": openKey, "vendor-version": "2023-06-01"},
		`{"model":"claude-x","messages":[{"role":"user","content":"Hi"}]}`)
	anthropicErr(s, m, 400, "invalid_request_error") // max_tokens missing
	s, m = post("/v1/messages", map[string]string{"x-api-key": openKey, "anthropic-version": "2023-06-01"},
		`{"model":"claude-x","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":512},"messages":[{"role":"user","content":"Hi"}]}`)
	anthropicErr(s, m, 400, "invalid_request_error")
	s, m = post("/v1/messages", map[string]string{"x-api-key": openKey, "anthropic-version": "2023-06-01"},
		`{"model":"nope","max_tokens":10,"messages":[{"role":"user","content":"Hi"}]}`)
	if s != 503 || m["type"] != "error" {
		t.Errorf("unknown model: %d %v", s, m)
	}

	gen := `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`
	s, m = post("/v1beta/models/gemini-x:generateContent", nil, gen)
	geminiErr(t, s, m, 401)
	s, m = post("/v1beta/models/gemini-x:generateContent?key="+openKey, nil, `{"contents":`)
	geminiErr(t, s, m, 400)
	s, m = post("/v1beta/models/nope:generateContent?key="+openKey, nil, gen)
	geminiErr(t, s, m, 503)
}

// geminiErr checks that an answer of status with the body m is a Gemini
// error of wantStatus.
func geminiErr(t *testing.T, status int, m map[string]any, wantStatus int) {
	t.Helper()
	e, _ := m["error"].(map[string]any)
	if status != wantStatus || e["code"] != float64(wantStatus) || e["status"] == "" || e["message"] == "" {
		t.Errorf("status %d body %v, want %d in Gemini's shape", status, m, wantStatus)
	}
}

// TestGeminiArrayStream: without alt=sse a Gemini stream is one JSON array,
// whatever the channel's style.
func TestGeminiArrayStream(t *testing.T) {
	tg, _, _, _ := styledGateway(t)
	for _, model := range []string{"gemini-x", "gpt-4o-mini", "claude-x"} {
		req, _ := http.NewRequest("POST", tg.url+"/v1beta/models/"+model+":streamGenerateContent",
			strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`))
		req.Header.Set("x-goog-api-key", openKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var chunks []struct {
			Candidates []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		err = json.NewDecoder(resp.Body).Decode(&chunks)
		resp.Body.Close()
		if err != nil || len(chunks) == 0 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: not a JSON array of chunks (%v), content type %q", model, err, resp.Header.Get("Content-Type"))
		}
		text := ""
		for _, c := range chunks {
			for _, cand := range c.Candidates {
				for _, p := range cand.Content.Parts {
					text += p.Text
				}
			}
		}
		if text == "" {
			t.Errorf("%s: no text in %d chunks", model, len(chunks))
		}
	}
}
