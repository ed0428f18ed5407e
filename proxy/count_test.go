package proxy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"google.golang.org/genai"
)

// Token counts, asked with the official SDKs, for a model of each channel
// type: the provider's own count where it has a count endpoint (Anthropic,
// Gemini), asked in its style, else an estimate; the header says which, and
// the count grows with the prompt.
func TestCountTokensWithSDKs(t *testing.T) {
	tg, _, an, ge := styledGateway(t)
	ctx := context.Background()
	var header http.Header
	keepHeader := func(r *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
		resp, err := next(r)
		if resp != nil {
			header = resp.Header
		}
		return resp, err
	}
	ac := anthropic.NewClient(aoption.WithBaseURL(tg.url), aoption.WithAPIKey(openKey), aoption.WithMaxRetries(0),
		aoption.WithMiddleware(keepHeader))
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: openKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: tg.url}})
	if err != nil {
		t.Fatal(err)
	}
	short, long := "Hi", strings.Repeat("Tell me about the sea. ", 50)
	for _, tc := range []struct {
		model, how string
		up         *mockUpstream
	}{{"gpt-4o-mini", "estimate", nil}, {"claude-x", "upstream", an}, {"gemini-x", "upstream", ge}} {
		t.Run(tc.model, func(t *testing.T) {
			count := func(text string) (int64, int32) {
				a, err := ac.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{
					Model:    anthropic.Model(tc.model),
					System:   anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("Be brief.")},
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
				})
				if err != nil {
					t.Fatal(err)
				}
				if got := header.Get("X-Rosetta-Token-Count"); got != tc.how {
					t.Errorf("X-Rosetta-Token-Count %q, want %q", got, tc.how)
				}
				if tc.up != nil {
					sent := tc.up.lastRequest().body
					if n := int64(mockCount(sent)); a.InputTokens != n {
						t.Errorf("count %d, want the provider's %d", a.InputTokens, n)
					}
					if !bytes.Contains(sent, []byte("Be brief.")) || bytes.Contains(sent, []byte(`"max_tokens"`)) {
						t.Errorf("the count request sent upstream: %s", sent)
					}
				}
				g, err := gc.Models.CountTokens(ctx, tc.model, genai.Text(text), nil)
				if err != nil {
					t.Fatal(err)
				}
				return a.InputTokens, g.TotalTokens
			}
			a1, g1 := count(short)
			a2, g2 := count(long)
			if a1 <= 0 || g1 <= 0 || a2 <= a1 || g2 <= g1 || a2 < 200 {
				t.Fatalf("counts: anthropic %d then %d, gemini %d then %d", a1, a2, g1, g2)
			}
		})
	}
	if got := string(ge.lastRequest().body); !strings.HasPrefix(got, `{"generateContentRequest":{"model":"models/gemini-x","contents":[`) {
		t.Errorf("Gemini's count request: %s", got)
	}
	// An unknown model is a 503 in each style, as for generation.
	_, err = ac.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "no-such-model",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))}})
	var aerr *anthropic.Error
	if !errors.As(err, &aerr) || aerr.StatusCode != 503 {
		t.Errorf("anthropic count of an unknown model: %v", err)
	}
	_, err = gc.Models.CountTokens(ctx, "no-such-model", genai.Text("Hi"), nil)
	var gerr genai.APIError
	if !errors.As(err, &gerr) || gerr.Code != 503 {
		t.Errorf("gemini count of an unknown model: %v", err)
	}
}

// A provider whose count endpoint fails gives way to the estimate: a token
// count is advice, and must not fail the client's request.
func TestCountTokensFallsBackToEstimate(t *testing.T) {
	down := newMock(t, jsonReply(500, []byte(`{"type":"error","error":{"type":"api_error","message":"boom"}}`)))
	tg := startGateway(t, "  - {name: an, type: anthropic, base_url: \""+down.srv.URL+"\", api_keys: ["+upstreamKey+"], models: [claude-x]}\n")
	req, _ := http.NewRequest("POST", tg.url+"/v1/messages/count_tokens",
		strings.NewReader(`{"model":"claude-x","messages":[{"role":"user","content":"Hello there, how are you today?"}]}`))
	req.Header.Set("x-api-key", openKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("X-Rosetta-Token-Count") != "estimate" || !bytes.Contains(body, []byte(`{"input_tokens":`)) {
		t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("X-Rosetta-Token-Count"), body)
	}
	if down.hits.Load() != 1 {
		t.Fatalf("the provider was asked %d times, want once", down.hits.Load())
	}
}
