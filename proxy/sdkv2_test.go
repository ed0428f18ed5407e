package proxy_test

// The newest Anthropic SDK (Go v2) speaks API version 2026-10-21 and sends
// its key as a bearer token. 2026-10-21 removes temperature, top_p and
// top_k from Messages requests (400 even at default values) and rejects a
// document block directly in an assistant message; responses and streams
// are as in 2023-06-01. Its tool round trips run in TestSignatureRoundTrips.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	anthropic1 "github.com/anthropics/anthropic-sdk-go"
	aoption1 "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// sent records what an SDK put on the wire: the headers and body of its
// last request.
type sent struct {
	mu     sync.Mutex
	header http.Header
	body   []byte
}

func (s *sent) middleware(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	s.mu.Lock()
	s.header, s.body = r.Header.Clone(), body
	s.mu.Unlock()
	return next(r)
}

func (s *sent) last() (http.Header, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header, s.body
}

// v2Client is an Anthropic v2 client of the gateway with openKey; its
// requests are recorded in rec.
func v2Client(url string, rec *sent, opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(url), option.WithAPIKey(openKey),
		option.WithMaxRetries(0), option.WithMiddleware(rec.middleware)}, opts...)...)
}

func v2Turn(c anthropic.Client, p anthropic.MessageNewParams, stream bool) (anthropic.Message, error) {
	ctx := context.Background()
	if !stream {
		m, err := c.Messages.New(ctx, p)
		if err != nil {
			return anthropic.Message{}, err
		}
		return *m, nil
	}
	s := c.Messages.NewStreaming(ctx, p)
	var acc anthropic.Message
	for s.Next() {
		ev := s.Current()
		if ev.Type == "message_start" && ev.Message.Usage.InputTokens == 0 {
			return acc, errors.New("message_start says input_tokens 0")
		}
		if err := acc.Accumulate(ev); err != nil {
			return acc, err
		}
	}
	return acc, s.Err()
}

func v2Hi(model string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 1024,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))},
	}
}

// anthropicV2ToolTurns is anthropicToolTurns with the v2 SDK.
func anthropicV2ToolTurns(t *testing.T, url, model string, stream bool) error {
	c := v2Client(url, &sent{})
	p := anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 4096, Thinking: anthropic.ThinkingConfigParamOfEnabled(2048),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(toolQuestion))},
	}
	for _, name := range toolNames {
		p.Tools = append(p.Tools, anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
			Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}}, name))
	}
	first, err := v2Turn(c, p, stream)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	var results []anthropic.ContentBlockParamUnion
	for _, b := range first.Content {
		if b.Type == "tool_use" {
			results = append(results, anthropic.NewToolResultBlock(b.ID, `{"ok":true}`, false))
		}
	}
	if len(results) == 0 {
		t.Fatalf("turn 1 has no tool_use: %+v", first.Content)
	}
	p.Messages = append(p.Messages, first.ToParam(), anthropic.NewUserMessage(results...))
	_, err = v2Turn(c, p, stream)
	return err
}

// TestAnthropicSDKv2Text: text answers from an OpenAI channel and from an
// Anthropic channel on 2023-06-01, which the gateway translates to.
func TestAnthropicSDKv2Text(t *testing.T) {
	tg, _, an, _ := styledGateway(t)
	var rec sent
	c := v2Client(tg.url, &rec)
	for _, tc := range []struct {
		model, text, streamText string
		stop                    anthropic.StopReason
	}{
		{"gpt-4o-mini", "Hello! How can I assist you today?", "Hello! How can I help?", anthropic.StopReasonEndTurn},
		{"claude-x", "Checking Tokyo's weather now.", "", anthropic.StopReasonToolUse},
	} {
		t.Run(tc.model, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				m, err := v2Turn(c, v2Hi(tc.model), stream)
				if err != nil {
					t.Fatalf("stream=%v: %v", stream, err)
				}
				want, stop := tc.text, tc.stop
				if stream {
					want, stop = tc.streamText, anthropic.StopReasonEndTurn
				}
				if text := v2Text(m); want != "" && text != want || text == "" || m.StopReason != stop || m.Usage.InputTokens == 0 || m.Usage.OutputTokens == 0 {
					t.Errorf("stream=%v: text %q, stop %q, usage %+v", stream, text, m.StopReason, m.Usage)
				}
				checkV2Headers(t, &rec)
			}
		})
	}
	// The channel speaks 2023-06-01: the request was translated for it.
	if h := an.lastRequest().header; h.Get("anthropic-version") != "2023-06-01" || h.Get("x-api-key") != upstreamKey || h.Get("authorization") != "" {
		t.Errorf("upstream headers %v", h)
	}
}

func v2Text(m anthropic.Message) string {
	var s strings.Builder
	for _, b := range m.Content {
		s.WriteString(b.Text)
	}
	return s.String()
}

// checkV2Headers checks that the SDK spoke 2026-10-21 with a bearer token:
// what this test file is about.
func checkV2Headers(t *testing.T, rec *sent) {
	t.Helper()
	h, _ := rec.last()
	if h.Get("anthropic-version") != "2026-10-21" || h.Get("authorization") != "Bearer "+openKey || h.Get("x-api-key") != "" {
		t.Fatalf("the v2 SDK sent anthropic-version %q, authorization %q, x-api-key %q",
			h.Get("anthropic-version"), h.Get("authorization"), h.Get("x-api-key"))
	}
}

// versionGateway serves claude-x on a 2023-06-01 channel and claude-new on
// a 2026-10-21 one.
func versionGateway(t *testing.T) (tg *testGateway, old, new *mockUpstream) {
	old, new = anthropicUpstream(t), anthropicUpstream(t)
	tg = startGateway(t,
		"  - {name: old, type: anthropic, base_url: \""+old.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n"+
			"  - {name: new, type: anthropic, base_url: \""+new.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-new], api_version: \"2026-10-21\"}\n")
	return tg, old, new
}

// TestAnthropicVersion20261021 checks both sides of the version change:
// what a 2026-10-21 client may send, and what a 2026-10-21 channel is sent.
func TestAnthropicVersion20261021(t *testing.T) {
	tg, _, upNew := versionGateway(t)
	var rec sent
	c := v2Client(tg.url, &rec)
	ctx := context.Background()

	t.Run("same version passes through", func(t *testing.T) {
		if _, err := v2Turn(c, v2Hi("claude-new"), false); err != nil {
			t.Fatal(err)
		}
		_, body := rec.last()
		up := upNew.lastRequest()
		if !bytes.Equal(up.body, body) || up.header.Get("anthropic-version") != "2026-10-21" || up.header.Get("x-api-key") != upstreamKey {
			t.Errorf("upstream got %s with version %q, client sent %s", up.body, up.header.Get("anthropic-version"), body)
		}
	})
	t.Run("sampling parameters are rejected", func(t *testing.T) {
		for _, field := range []string{"temperature", "top_p", "top_k"} {
			_, err := c.Messages.New(ctx, v2Hi("claude-x"), option.WithJSONSet(field, 1))
			checkV2Error(t, err, 400, "invalid_request_error", field)
		}
	})
	t.Run("document in an assistant turn is rejected", func(t *testing.T) {
		p := v2Hi("claude-x")
		p.Messages = append(p.Messages,
			anthropic.NewAssistantMessage(anthropic.NewDocumentBlock(anthropic.PlainTextSourceParam{Data: "notes"})),
			anthropic.NewUserMessage(anthropic.NewTextBlock("Go on")))
		_, err := c.Messages.New(ctx, p)
		checkV2Error(t, err, 400, "invalid_request_error", "document")
	})
	t.Run("a 2023-06-01 client's sampling parameters are not sent", func(t *testing.T) {
		v1 := anthropic1.NewClient(aoption1.WithBaseURL(tg.url), aoption1.WithAPIKey(openKey), aoption1.WithMaxRetries(0))
		var resp *http.Response
		_, err := v1.Messages.New(ctx, anthropic1.MessageNewParams{
			Model: "claude-new", MaxTokens: 1024, Temperature: anthropic1.Float(0.5), TopK: anthropic1.Int(5),
			Messages: []anthropic1.MessageParam{anthropic1.NewUserMessage(anthropic1.NewTextBlock("Hi"))},
		}, aoption1.WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		var sentUp map[string]json.RawMessage
		json.Unmarshal(upNew.lastRequest().body, &sentUp)
		dropped := resp.Header.Get("X-Rosetta-Dropped")
		if sentUp["temperature"] != nil || sentUp["top_k"] != nil || sentUp["messages"] == nil ||
			!strings.Contains(dropped, "temperature") || !strings.Contains(dropped, "top_k") {
			t.Errorf("upstream got %s; X-Rosetta-Dropped %q", upNew.lastRequest().body, dropped)
		}
	})
}

// TestAnthropicSDKv2Errors: a version header the gateway does not know,
// and a wrong bearer key, answered in Anthropic's shape.
func TestAnthropicSDKv2Errors(t *testing.T) {
	tg, _, _ := versionGateway(t)
	var rec sent
	unknown := v2Client(tg.url, &rec, option.WithHeader("anthropic-version", "2099-01-01"))
	_, err := unknown.Messages.New(context.Background(), v2Hi("claude-new"))
	checkV2Error(t, err, 400, "invalid_request_error", "anthropic-version")
	wrongKey := v2Client(tg.url, &rec, option.WithAPIKey("sk-wrong-0123456789abcdef"))
	_, err = wrongKey.Messages.New(context.Background(), v2Hi("claude-new"))
	checkV2Error(t, err, 401, "authentication_error", "")
	if h, _ := rec.last(); h.Get("authorization") != "Bearer sk-wrong-0123456789abcdef" {
		t.Errorf("the wrong key went as %q", h.Get("authorization"))
	}
}

// checkV2Error checks that err is an Anthropic API error with the status
// and type, whose message mentions mention.
func checkV2Error(t *testing.T, err error, status int, typ, mention string) {
	t.Helper()
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != status || string(apiErr.Type()) != typ || !strings.Contains(apiErr.Message, mention) {
		t.Errorf("got %v, want %d %s mentioning %q", err, status, typ, mention)
	}
}
