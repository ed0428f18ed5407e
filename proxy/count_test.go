package proxy_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"google.golang.org/genai"
)

// Token counts, asked with the official SDKs, for a model of each channel
// type: an estimate, said to be one, that grows with the prompt.
func TestCountTokensWithSDKs(t *testing.T) {
	tg, _, _, _ := styledGateway(t)
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
	for _, model := range []string{"gpt-4o-mini", "claude-x", "gemini-x"} {
		t.Run(model, func(t *testing.T) {
			count := func(text string) (int64, int32) {
				a, err := ac.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{
					Model:    anthropic.Model(model),
					System:   anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("Be brief.")},
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
				})
				if err != nil {
					t.Fatal(err)
				}
				if got := header.Get("X-Rosetta-Token-Count"); got != "estimate" {
					t.Errorf("X-Rosetta-Token-Count %q, want estimate", got)
				}
				g, err := gc.Models.CountTokens(ctx, model, genai.Text(text), nil)
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
