package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// retrieveGateway serves gpt-4o-mini, fast, a model with a slash in its
// name, and one clientKey may not use.
func retrieveGateway(t *testing.T) *testGateway {
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	return startGateway(t, channel("a", up.baseURL(), "model_map: {fast: gpt-4o-mini, gpt-org/x-1: gpt-4o-mini, other: gpt-4o-mini}"))
}

// TestModelsRetrieveOpenAISDK: openai-go's client.Models.Get gets the model
// object GET /v1/models lists, and a 404 model_not_found for a model that
// does not exist or that the key may not use.
func TestModelsRetrieveOpenAISDK(t *testing.T) {
	tg := retrieveGateway(t)
	client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	ctx := context.Background()
	page, err := client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]openai.Model{}
	for _, m := range page.Data {
		listed[m.ID] = m
	}
	if _, ok := listed["gpt-org/x-1"]; !ok || len(listed) != 2 { // "other" is not clientKey's
		t.Fatalf("listed %v, want fast and gpt-org/x-1", listed)
	}
	for id := range listed {
		m, err := client.Models.Get(ctx, id)
		if err != nil {
			t.Fatalf("Models.Get(%q): %v", id, err)
		}
		want, ok := listed[id]
		if !ok || m.ID != id || m.Object != "model" || m.Created != want.Created || m.OwnedBy != want.OwnedBy || m.OwnedBy == "" || m.Created == 0 {
			t.Errorf("Models.Get(%q) = %+v, listed as %+v", id, m, want)
		}
	}
	for _, id := range []string{"nope", "other"} { // unknown; not allowed to clientKey
		_, err := client.Models.Get(ctx, id)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" ||
			apiErr.Type != "invalid_request_error" || !strings.Contains(apiErr.Message, id) {
			t.Errorf("Models.Get(%q): %v, want a 404 model_not_found", id, err)
		}
	}
	bad := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey("sk-wrong-0123456789abcdef"), option.WithMaxRetries(0))
	if _, err := bad.Models.Get(ctx, "fast"); !isStatus(err, 401) {
		t.Errorf("a wrong key: %v, want 401", err)
	}
}

// TestModelsRetrieveAnthropicSDK: anthropic-sdk-go's client.Models.Get
// gets Anthropic's model object, and a 404 not_found_error.
func TestModelsRetrieveAnthropicSDK(t *testing.T) {
	tg := retrieveGateway(t)
	client := anthropic.NewClient(aoption.WithBaseURL(tg.url), aoption.WithAPIKey(clientKey), aoption.WithMaxRetries(0))
	ctx := context.Background()
	page, err := client.Models.List(ctx, anthropic.ModelListParams{})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]anthropic.ModelInfo{}
	for _, m := range page.Data {
		listed[m.ID] = m
	}
	if _, ok := listed["gpt-org/x-1"]; !ok || len(listed) != 2 {
		t.Fatalf("listed %v, want fast and gpt-org/x-1", listed)
	}
	for id := range listed {
		m, err := client.Models.Get(ctx, id, anthropic.ModelGetParams{})
		if err != nil {
			t.Fatalf("Models.Get(%q): %v", id, err)
		}
		want := listed[id]
		if m.ID != id || string(m.Type) != "model" || m.DisplayName != id || !m.CreatedAt.Equal(want.CreatedAt) ||
			m.CreatedAt.Before(time.Now().Add(-time.Hour)) {
			t.Errorf("Models.Get(%q) = id %q type %q display_name %q created_at %v, listed as %v", id, m.ID, m.Type, m.DisplayName, m.CreatedAt, want.CreatedAt)
		}
	}
	for _, id := range []string{"nope", "other"} {
		_, err := client.Models.Get(ctx, id, anthropic.ModelGetParams{})
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || !strings.Contains(apiErr.RawJSON(), `"type":"not_found_error"`) ||
			!strings.HasPrefix(apiErr.RawJSON(), `{"type":"error"`) {
			t.Errorf("Models.Get(%q): %v, want a 404 not_found_error in Anthropic's shape", id, err)
		}
	}
}

// The object GET /v1/models/{model} answers is, byte for byte, the one
// GET /v1/models lists, in the shape the list would take for the same
// headers.
func TestModelsRetrieveShapeFollowsTheList(t *testing.T) {
	tg := retrieveGateway(t)
	answered := 0
	for _, h := range []map[string]string{
		{"Authorization": "Bearer " + clientKey},
		{"x-api-key": clientKey, "anthropic-version": "2023-06-01"},
		{"Authorization": "Bearer " + clientKey, "x-api-key": clientKey, "anthropic-version": "2023-06-01"},
		{"x-api-key": clientKey}, // no version: not Anthropic's, and no bearer key
		{"x-api-key": clientKey, "anthropic-version": "2023-06-01", "anthropic-beta": "x"},
	} {
		resp, list := tg.send(t, "GET", "/v1/models", h, "")
		resp1, one := tg.send(t, "GET", "/v1/models/fast", h, "")
		if resp.StatusCode != resp1.StatusCode {
			t.Errorf("%v: list %d, retrieve %d", h, resp.StatusCode, resp1.StatusCode)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			continue
		}
		answered++
		var l struct{ Data []json.RawMessage }
		if err := json.Unmarshal(list, &l); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, obj := range l.Data {
			found = found || bytes.Equal(obj, one)
		}
		if !found {
			t.Errorf("%v: GET /v1/models/fast = %s, not an object of the list %s", h, one, list)
		}
		if ct := resp1.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%v: Content-Type %q", h, ct)
		}
	}
	if answered != 4 {
		t.Errorf("%d of the header sets answered 200, want 4", answered)
	}
}

func isStatus(err error, status int) bool {
	var o *openai.Error
	return errors.As(err, &o) && o.StatusCode == status
}
