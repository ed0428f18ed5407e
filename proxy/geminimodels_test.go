package proxy_test

import (
	"context"
	"slices"
	"testing"
)

// TestGeminiModelsMethods: the official Gemini client's models.list and
// models.get name, for each model, the methods its channels serve: those
// of generation for chat, embedContent and batchEmbedContents for
// embeddings, both when a channel serves both, none for a rerank model.
func TestGeminiModelsMethods(t *testing.T) {
	up := newMock(t, jsonReply(500, nil)) // never called
	tg := startGateway(t,
		"  - {name: chat, type: openai, base_url: \""+up.baseURL()+"\", api_keys: [k], models: [only-chat], endpoints: [chat]}\n"+
			"  - {name: emb, type: gemini, base_url: \""+up.srv.URL+"\", api_keys: [k], models: [only-embed], endpoints: [embeddings]}\n"+
			"  - {name: all, type: openai, base_url: \""+up.baseURL()+"\", api_keys: [k], models: [both]}\n"+
			"  - {name: mix, type: gemini, base_url: \""+up.srv.URL+"\", api_keys: [k], models: [only-chat], endpoints: [embeddings]}\n"+
			cohereChannel("co", up, ""))
	generate := []string{"generateContent", "streamGenerateContent", "countTokens"}
	embed := []string{"embedContent", "batchEmbedContents"}
	want := map[string][]string{
		"models/only-chat":  append(slices.Clone(generate), embed...), // a second channel adds embeddings
		"models/only-embed": embed,
		"models/both":       append(slices.Clone(generate), embed...),
		"models/gpt-rerank": nil,
	}
	client := genaiClient(t, tg, openKey)
	ctx := context.Background()
	seen := 0
	for m, err := range client.Models.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[m.Name]
		if !ok {
			continue
		}
		seen++
		if !slices.Equal(m.SupportedActions, w) {
			t.Errorf("list: %s supports %q, want %q", m.Name, m.SupportedActions, w)
		}
		got, err := client.Models.Get(ctx, m.Name, nil)
		if err != nil || !slices.Equal(got.SupportedActions, w) {
			t.Errorf("get: %s supports %q, %v; want %q", m.Name, got.SupportedActions, err, w)
		}
	}
	if seen != len(want) {
		t.Errorf("listed %d of the %d models", seen, len(want))
	}
}
