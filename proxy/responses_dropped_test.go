package proxy_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// TestResponsesDroppedNamed: each member of a Responses request that
// the translation reads and leaves out is named in X-Rosetta-Dropped,
// sent by openai-go to a chat-only channel (responses: translate), whose
// encoder leaves out nothing more; a request that leaves out nothing,
// or includes only reasoning.encrypted_content (always given), has no
// header.
func TestResponsesDroppedNamed(t *testing.T) {
	tg, _ := responsesGateway(t, proxy.Options{})
	client := responsesClient(tg)
	hi := responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}
	image := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailHigh)
	image.OfInputImage.ImageURL = openai.String("https://example.com/cat.png")
	schema := responses.ResponseFormatTextConfigParamOfJSONSchema("answer", map[string]any{"type": "object"})
	schema.OfJSONSchema.Description = openai.String("The answer.")
	for _, c := range []struct {
		dropped string
		set     func(p *responses.ResponseNewParams)
	}{
		{"", func(*responses.ResponseNewParams) {}},
		{"", func(p *responses.ResponseNewParams) {
			p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		}},
		{"text.verbosity", func(p *responses.ResponseNewParams) { p.Text.Verbosity = responses.ResponseTextConfigVerbosityLow }},
		{"include", func(p *responses.ResponseNewParams) {
			p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent,
				responses.ResponseIncludableMessageOutputTextLogprobs}
		}},
		{"max_tool_calls", func(p *responses.ResponseNewParams) { p.MaxToolCalls = openai.Int(2) }},
		{"prompt_cache_key", func(p *responses.ResponseNewParams) { p.PromptCacheKey = openai.String("k1") }},
		{"prompt_cache_retention", func(p *responses.ResponseNewParams) {
			p.PromptCacheRetention = responses.ResponseNewParamsPromptCacheRetention24h
		}},
		{"service_tier", func(p *responses.ResponseNewParams) { p.ServiceTier = responses.ResponseNewParamsServiceTierFlex }},
		{"top_logprobs", func(p *responses.ResponseNewParams) { p.TopLogprobs = openai.Int(3) }},
		{"truncation", func(p *responses.ResponseNewParams) { p.Truncation = responses.ResponseNewParamsTruncationAuto }},
		{"input_image.detail", func(p *responses.ResponseNewParams) {
			p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
					responses.ResponseInputContentParamOfInputText("What is this?"), image}, responses.EasyInputMessageRoleUser)}}
		}},
		{"tool_choice.tools", func(p *responses.ResponseNewParams) {
			p.Tools = weatherTools
			p.ToolChoice.OfAllowedTools = &responses.ToolChoiceAllowedParam{Mode: responses.ToolChoiceAllowedModeAuto,
				Tools: []map[string]any{{"type": "function", "name": "get_weather"}}}
		}},
		{"text.format.description", func(p *responses.ResponseNewParams) { p.Text.Format = schema }},
		{"access_programs", func(p *responses.ResponseNewParams) { p.AccessPrograms.Cyber = "x" }},
		{"context_management", func(p *responses.ResponseNewParams) {
			p.ContextManagement = []responses.ResponseNewParamsContextManagement{{Type: "compaction"}}
		}},
		{"moderation", func(p *responses.ResponseNewParams) { p.Moderation.Model = "omni-moderation-latest" }},
		{"prompt_cache_options", func(p *responses.ResponseNewParams) { p.PromptCacheOptions.Ttl = "1h" }},
		{"stream_options", nil}, // streamed below
		{"service_tier, text.verbosity", func(p *responses.ResponseNewParams) {
			p.Text.Verbosity, p.ServiceTier = responses.ResponseTextConfigVerbosityHigh, responses.ResponseNewParamsServiceTierFlex
		}},
	} {
		p := responses.ResponseNewParams{Model: "gpt-4o-mini", Input: hi}
		var resp *http.Response
		var err error
		if c.set == nil {
			p.StreamOptions.IncludeObfuscation = openai.Bool(false)
			s := client.Responses.NewStreaming(context.Background(), p, option.WithResponseInto(&resp))
			for s.Next() {
			}
			err = s.Err()
		} else {
			c.set(&p)
			_, err = client.Responses.New(context.Background(), p, option.WithResponseInto(&resp))
		}
		if err != nil {
			t.Errorf("%q: %v", c.dropped, err)
			continue
		}
		if got := resp.Header.Get("X-Rosetta-Dropped"); got != c.dropped {
			t.Errorf("X-Rosetta-Dropped %q, want %q", got, c.dropped)
		}
	}
}
