package openai

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

// TestReadRelayed: a whole response's top-level model and usage, in one
// pass that also checks the JSON; nested members of the same names are
// not taken for them.
func TestReadRelayed(t *testing.T) {
	for _, c := range []struct {
		body  string
		model string // "" for none
		usage codec.Usage
		ok    bool
	}{
		{`{"id":"x","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`, "gpt-4o",
			codec.Usage{Input: 3, Output: 4}, true},
		{"{\n  \"model\": \"m\",\n  \"usage\": {\n    \"prompt_tokens\": 8,\n    \"total_tokens\": 8\n  }\n}", "m",
			codec.Usage{Input: 8}, true},
		{`{"choices":[{"model":"nested","usage":{"prompt_tokens":1}}],"model":"top","usage":null}`, "top", codec.Usage{}, true},
		{`{"model":"esc\"aped","usage":{"prompt_tokens":2}}`, "", codec.Usage{Input: 2}, true},
		{`{"data":[{"embedding":[0.1,-2e-3]}],"model":"e","usage":{"prompt_tokens":5,"total_tokens":5}}`, "e",
			codec.Usage{Input: 5}, true},
		{`{"model":"m","usage":{"prompt_tokens":"x"}}`, "m", codec.Usage{}, true},
		{`{"model":"m"`, "", codec.Usage{}, false},
		{"{\"model\":\"m\",\"x\":\"\x01\"}", "", codec.Usage{}, false},
	} {
		r, ok := Dialect.ReadRelayed([]byte(c.body))
		if ok != c.ok {
			t.Errorf("%s: ok %v", c.body, ok)
			continue
		}
		if !ok {
			continue
		}
		model := ""
		if r.ModelStart >= 0 {
			model = c.body[r.ModelStart:r.ModelEnd]
		}
		if model != c.model || r.Usage != c.usage || r.HasUsage != (c.usage != codec.Usage{}) {
			t.Errorf("%s: model %q usage %+v (%v)", c.body, model, r.Usage, r.HasUsage)
		}
	}
}
