package proxy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestOpenAISDK drives the gateway with the official OpenAI Go client.
func TestOpenAISDK(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	stream := newMock(t, streamReply(evs, 0))
	whole := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGateway(t,
		channel("whole", whole.baseURL(), "model_map: {fast: gpt-4o-mini}")+
			"  - {name: stream, type: openai, base_url: \""+stream.baseURL()+"\", api_keys: [k], models: [gpt-4o-mini], model_map: {slow: gpt-4o-mini}}\n")
	client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	ctx := context.Background()

	t.Run("completion", func(t *testing.T) {
		c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "fast",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hi")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Model != "fast" || c.Choices[0].Message.Content != "Hello! How can I assist you today?" ||
			c.Choices[0].FinishReason != "stop" || c.Usage.PromptTokens != 19 || c.Usage.CompletionTokens != 10 {
			t.Fatalf("completion %+v", c)
		}
	})
	t.Run("stream with usage", func(t *testing.T) {
		s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         "slow",
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
			if m := s.Current().Model; m != "slow" {
				t.Fatalf("chunk model %q", m)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != "Hello! How can I help?" {
			t.Errorf("content %q", got)
		}
		if acc.Usage.PromptTokens != 19 || acc.Usage.CompletionTokens != 8 ||
			acc.Usage.PromptTokensDetails.CachedTokens != 3 || acc.Usage.CompletionTokensDetails.ReasoningTokens != 2 {
			t.Errorf("usage %+v", acc.Usage)
		}
	})
	t.Run("errors", func(t *testing.T) {
		bad := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey("sk-wrong-0123456789abcdef"), option.WithMaxRetries(0))
		_, err := bad.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "fast", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
			t.Fatalf("wrong key: %v", err)
		}
		_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "gpt-unknown", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}})
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Code != "model_not_found" {
			t.Fatalf("unknown model: %v", err)
		}
	})
	t.Run("models", func(t *testing.T) {
		page, err := client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if len(ids) != 2 || ids[0] != "fast" || ids[1] != "slow" {
			t.Errorf("models %v", ids)
		}
	})
}
