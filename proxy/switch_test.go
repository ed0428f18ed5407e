package proxy_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"google.golang.org/genai"
)

// lastBody is the body of the last request m was sent.
func lastBody(m *mockUpstream) string { return string(m.lastRequest().body) }

// An agent that switches model family mid-conversation (an Anthropic
// client, turns alternating between a Claude and a Gemini model) keeps
// working: each provider gets back only the signatures it minted, which it
// verifies, and never another's, which it would refuse ("Invalid signature
// in thinking block", "Corrupted thought signature").
func TestSwitchingProvidersKeepsEachOnesSignatures(t *testing.T) {
	claudeAnswer := wire(t, "anthropic/messages_response_thinking_tool.json")
	geminiAnswer := signLastThought(wire(t, "gemini/generate_response_function_call.json"), "\n            ")
	claude, gem := newMock(t, jsonReply(200, claudeAnswer)), newMock(t, jsonReply(200, geminiAnswer))
	tg := startGateway(t,
		"  - {name: an, type: anthropic, base_url: \""+claude.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n"+
			"  - {name: ge, type: gemini, base_url: \""+gem.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [gemini-x]}\n")
	client := anthropic.NewClient(aoption.WithBaseURL(tg.url), aoption.WithAPIKey(openKey), aoption.WithMaxRetries(0))
	ctx := context.Background()

	var claudeSig string // Anthropic's signature of turn 1's thinking
	for _, b := range mustMessage(t, claudeAnswer).Content {
		if b.Type == "thinking" {
			claudeSig = b.Signature
		}
	}
	if claudeSig == "" || strings.Contains(string(geminiAnswer), claudeSig) {
		t.Fatal("the fixtures do not give the two providers distinct signatures")
	}
	history := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris and Tokyo?"))}
	turn := func(model string) *anthropic.Message {
		t.Helper()
		msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model: anthropic.Model(model), MaxTokens: 4096, Messages: history,
			Thinking: anthropic.ThinkingConfigParamOfEnabled(2048),
		})
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		var results []anthropic.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				results = append(results, anthropic.NewToolResultBlock(b.ID, `{"ok":true}`, false))
			}
		}
		history = append(history, msg.ToParam(), anthropic.NewUserMessage(results...))
		return msg
	}

	turn("claude-x")
	turn("gemini-x") // Claude's thinking is in the history: Gemini must not get its signature
	if body := lastBody(gem); strings.Contains(body, claudeSig) || !strings.Contains(body, `"functionResponse"`) {
		t.Errorf("Gemini got Anthropic's signature, or no tool results:\n%s", body)
	}
	turn("claude-x") // now Gemini's turn is in the history too
	body := lastBody(claude)
	if !strings.Contains(body, `"signature":"`+claudeSig+`"`) {
		t.Errorf("Claude did not get its own signature back:\n%s", body)
	}
	if strings.Contains(body, thoughtSig) || strings.Contains(body, "rosetta:") {
		t.Errorf("Claude got Gemini's signature, or a gateway tag:\n%s", body)
	}
	turn("gemini-x")
	body = lastBody(gem)
	if !strings.Contains(body, `"thoughtSignature":"`+thoughtSig+`"`) {
		t.Errorf("Gemini did not get its own signature back:\n%s", body)
	}
	if strings.Contains(body, claudeSig) || strings.Contains(body, "rosetta:") {
		t.Errorf("Gemini got Anthropic's signature, or a gateway tag:\n%s", body)
	}
}

func mustMessage(t *testing.T, body []byte) anthropic.Message {
	t.Helper()
	var m anthropic.Message
	if err := m.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	return m
}

// The same switch from a Gemini client, whose signatures travel as base64
// thoughtSignature values (another provider's wrapped by the gateway), and
// streamed.
func TestSwitchingProvidersFromGeminiClient(t *testing.T) {
	claudeStream := splitSSE(wire(t, "anthropic/messages_stream_thinking_tool.sse"))
	geminiSSE := splitSSE(signLastThought(wire(t, "gemini/stream_sse_thinking_function.sse"), ""))
	claude, gem := newMock(t, streamReply(claudeStream, 0)), newMock(t, streamReply(geminiSSE, 0))
	tg := startGateway(t,
		"  - {name: an, type: anthropic, base_url: \""+claude.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n"+
			"  - {name: ge, type: gemini, base_url: \""+gem.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [gemini-x]}\n")
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: openKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: tg.url}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true}}
	contents := []*genai.Content{genai.NewContentFromText(toolQuestion, genai.RoleUser)}
	turn := func(model string) {
		t.Helper()
		reply, err := geminiTurn(c, model, contents, cfg, true)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		var results []*genai.Part
		for _, p := range reply.Parts {
			if p.FunctionCall != nil {
				r := genai.NewPartFromFunctionResponse(p.FunctionCall.Name, map[string]any{"ok": true})
				r.FunctionResponse.ID = p.FunctionCall.ID
				results = append(results, r)
			}
		}
		contents = append(contents, reply, genai.NewContentFromParts(results, genai.RoleUser))
	}
	var claudeSig string // of the thinking block Claude streams
	for _, m := range regexp.MustCompile(`"signature":"([^"]+)"`).FindAllSubmatch(wire(t, "anthropic/messages_stream_thinking_tool.sse"), -1) {
		claudeSig = string(m[1])
	}
	if claudeSig == "" {
		t.Fatal("the Anthropic stream fixture signs no thinking")
	}

	turn("gemini-x")
	turn("claude-x")
	if body := lastBody(claude); strings.Contains(body, thoughtSig) || strings.Contains(body, "rosetta") {
		t.Errorf("Claude got Gemini's signature, or a gateway tag:\n%s", body)
	}
	turn("gemini-x")
	body := lastBody(gem)
	if !strings.Contains(body, `"thoughtSignature":"`+thoughtSig+`"`) {
		t.Errorf("Gemini did not get its own signature back:\n%s", body)
	}
	if strings.Contains(body, claudeSig) || strings.Contains(body, "cm9zZXR0YS5") {
		t.Errorf("Gemini got Anthropic's signature or redacted thinking, or a gateway mark:\n%s", body)
	}
	turn("claude-x")
	if body := lastBody(claude); !strings.Contains(body, claudeSig) || strings.Contains(body, thoughtSig) {
		t.Errorf("Claude did not get its own signature back, or got Gemini's:\n%s", body)
	}
}
