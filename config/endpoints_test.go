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
		"openai":    {"chat", "completions", "embeddings", "rerank", "images", "audio", "realtime", "responses"},
		"demo":      {"chat", "completions", "embeddings", "rerank", "images", "audio", "realtime", "responses"},
		"gemini":    {"chat", "embeddings", "responses"},
		"anthropic": {"chat", "responses"},
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
		"channels: [{name: a, type: anthropic, api_keys: [k], models: [m], endpoints: [rerank]}]":           "rosetta.yaml: channels[0].endpoints[0]: anthropic channels do not serve rerank (they serve chat and responses)",
		"channels: [{name: a, type: anthropic, api_keys: [k], models: [m], endpoints: [images]}]":           "rosetta.yaml: channels[0].endpoints[0]: anthropic channels do not serve images (they serve chat and responses)",
		"channels: [{name: g, type: gemini, api_keys: [k], models: [m], endpoints: [chat, audio]}]":         "rosetta.yaml: channels[0].endpoints[1]: gemini channels do not serve audio (they serve chat, embeddings and responses)",
		"channels: [{name: a, type: anthropic, api_keys: [k], models: [m], endpoints: [realtime]}]":         "rosetta.yaml: channels[0].endpoints[0]: anthropic channels do not serve realtime (they serve chat and responses)",
	} {
		if _, err := Parse([]byte(yml), "rosetta.yaml", envMap(nil)); err == nil || err.Error() != want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", yml, err, want)
		}
	}
}

// TestResponsesSetting: openai channels serve the Responses API natively
// by default, the others by translation; native is refused where the
// upstream has no such API, and the setting where the type serves no
// Responses at all.
func TestResponsesSetting(t *testing.T) {
	c, err := Parse([]byte(`channels: [{name: oa, type: openai, api_keys: [k], models: [m]},
  {name: vllm, type: openai, api_keys: [k], models: [m], responses: translate},
  {name: a, type: anthropic, api_keys: [k], models: [m]}, {name: d, type: demo, models: [m]},
  {name: co, type: cohere, api_keys: [k], models: [r]}]`), "rosetta.yaml", envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"native", "translate", "translate", "translate", ""} {
		if got := c.Channels[i].Responses; got != want {
			t.Errorf("%s: responses %q, want %q", c.Channels[i].Name, got, want)
		}
	}
	for yml, want := range map[string]string{
		"channels: [{name: a, type: anthropic, api_keys: [k], models: [m], responses: native}]": "rosetta.yaml: channels[0].responses: anthropic channels serve the Responses API by translation only (want translate)",
		"channels: [{name: d, type: demo, models: [m], responses: native}]":                     "rosetta.yaml: channels[0].responses: demo channels serve the Responses API by translation only (want translate)",
		"channels: [{name: o, type: openai, api_keys: [k], models: [m], responses: both}]":      `rosetta.yaml: channels[0].responses: unknown value "both" (want native or translate)`,
		"channels: [{name: c, type: cohere, api_keys: [k], models: [m], responses: translate}]": "rosetta.yaml: channels[0].responses: cohere channels do not serve the Responses API",
		"store: {responses_retention: 1m}":                                                      "rosetta.yaml: store.responses_retention: must be at least 1h, got 1m0s",
	} {
		if _, err := Parse([]byte(yml), "rosetta.yaml", envMap(nil)); err == nil || err.Error() != want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", yml, err, want)
		}
	}
}
