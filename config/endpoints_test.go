package config

import (
	"slices"
	"testing"
)

// TestRerankEndpoints: a cohere channel serves rerank and nothing else,
// by default and when its endpoints say so; naming another family is an
// error that says what it serves, as is rerank, images, audio or realtime on a type
// whose API has none.
func TestRerankEndpoints(t *testing.T) {
	for typ, want := range map[string][]string{
		"cohere":    {"rerank"},
		"openai":    {"chat", "completions", "embeddings", "rerank", "images", "audio", "realtime"},
		"demo":      {"chat", "completions", "embeddings", "rerank", "images", "audio", "realtime"},
		"gemini":    {"chat", "embeddings"},
		"anthropic": {"chat"},
	} {
		if got := ServedEndpoints(typ); !slices.Equal(got, want) {
			t.Errorf("ServedEndpoints(%q) = %q, want %q", typ, got, want)
		}
	}
	env := envMap(map[string]string{"COHERE_API_KEY": "co-1"})
	c, err := Parse([]byte("channels: [{name: co, type: cohere, models: [rerank-v3.5], endpoints: [rerank]}]"), "rosetta.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if ch := c.Channels[0]; ch.BaseURL != "https://api.cohere.com" || !slices.Equal(ch.APIKeys, []string{"co-1"}) {
		t.Errorf("cohere channel %+v: want Cohere's base URL and COHERE_API_KEY", ch)
	}
	for yml, want := range map[string]string{
		"channels: [{name: co, type: cohere, api_keys: [k], models: [m], endpoints: [chat]}]":               "rosetta.yaml: channels[0].endpoints[0]: cohere channels do not serve chat (they serve rerank)",
		"channels: [{name: co, type: cohere, api_keys: [k], models: [m], endpoints: [rerank, embeddings]}]": "rosetta.yaml: channels[0].endpoints[1]: cohere channels do not serve embeddings (they serve rerank)",
		"channels: [{name: co, type: cohere, models: [m]}]":                                                 "rosetta.yaml: channels[0].api_keys: missing (set api_keys or COHERE_API_KEY)",
		"channels: [{name: a, type: anthropic, api_keys: [k], models: [m], endpoints: [rerank]}]":           "rosetta.yaml: channels[0].endpoints[0]: anthropic channels do not serve rerank (they serve chat)",
		"channels: [{name: a, type: anthropic, api_keys: [k], models: [m], endpoints: [images]}]":           "rosetta.yaml: channels[0].endpoints[0]: anthropic channels do not serve images (they serve chat)",
		"channels: [{name: g, type: gemini, api_keys: [k], models: [m], endpoints: [chat, audio]}]":         "rosetta.yaml: channels[0].endpoints[1]: gemini channels do not serve audio (they serve chat and embeddings)",
		"channels: [{name: a, type: anthropic, api_keys: [k], models: [m], endpoints: [realtime]}]":         "rosetta.yaml: channels[0].endpoints[0]: anthropic channels do not serve realtime (they serve chat)",
	} {
		if _, err := Parse([]byte(yml), "rosetta.yaml", envMap(nil)); err == nil || err.Error() != want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", yml, err, want)
		}
	}
}
