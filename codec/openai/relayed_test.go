package openai

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
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

// readRelayedReference is what ReadRelayed did before it read the usage as
// it checked it: a check (here encoding/json's), then the first top-level
// model and usage, each read in a pass of its own.
func readRelayedReference(body []byte, k *usageKeys) (codec.Relayed, bool) {
	if !json.Valid(body) {
		return codec.Relayed{}, false
	}
	r := codec.Relayed{ModelStart: -1, ModelEnd: -1}
	if v := firstMember(body, "model"); v != nil {
		r.ModelStart, r.ModelEnd = modelSpanAt(body, cap(body)-cap(v))
	}
	if v := firstMember(body, "usage"); rawjson.KindOf(v) == rawjson.KindObject {
		if u, err := decodeUsageReference(v, k); err == nil {
			r.Usage, r.HasUsage = u, true
		}
	}
	return r, true
}

// firstMember is the value of the first top-level member of b named key
// (as spelled), or nil.
func firstMember(b []byte, key string) []byte {
	for m := rawjson.Members(b); m.Next(); {
		if string(m.Key()) == key {
			return m.Value()
		}
	}
	return nil
}

// decodeUsageReference reads a checked usage object member by member, the
// details objects in passes of their own: the last of a repeated count
// counts, the first of a repeated detail.
func decodeUsageReference(b []byte, k *usageKeys) (u codec.Usage, err error) {
	detail := func(v []byte, key string) (int, error) {
		if rawjson.KindOf(v) == rawjson.KindNull {
			return 0, nil
		}
		m := rawjson.Members(v)
		for m.Next() {
			if string(m.Key()) == key {
				return count(m.Value())
			}
		}
		return 0, m.Err()
	}
	m := rawjson.Members(b)
	for m.Next() && err == nil {
		switch v := m.Value(); string(m.Key()) {
		case k.input:
			u.Input, err = count(v)
		case k.output:
			u.Output, err = count(v)
		case k.inputDetails:
			u.CachedInput, err = detail(v, "cached_tokens")
		case k.outputDetails:
			u.Reasoning, err = detail(v, "reasoning_tokens")
		}
	}
	return u, err
}

// FuzzReadRelayed holds ReadRelayed, which reads the usage as it checks
// the answer, to readRelayedReference, for chat and Responses answers.
func FuzzReadRelayed(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
		`{"model":"m","usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2},"completion_tokens_details":null}}`,
		`{"usage":{"prompt_tokens":1,"prompt_tokens":2},"usage":{"prompt_tokens":5},"model":"a","model":"b"}`,
		`{"usage":{"completion_tokens_details":5}}`, `{"usage":{"prompt_tokens_details":{"cached_tokens":-1}}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":1,}}}`, `{"usage":{"prompt_tokens":01}}`, `{"usage":{"x":[}}`,
		`{"usage":{"prompt_tokens_details":nul}}`, `{"usage":{"prompt_tokens_details":nullx}}`, `{"usage":{"prompt_tokens_details":`,
		`{"usage":{"input_tokens":7,"output_tokens_details":{"reasoning_tokens":2}}}`, `[1]`, `"x"`, ` {} `, `{"usage":{}} x`,
		`{"usage":{"prompt_tokens":0,"completion_tokens":12 ,"prompt_tokens_details":{"cached_tokens":3}}}`,
		`{"usage":{"prompt_tokens":1234567890123456789,"completion_tokens":-0}}`, `{"usage":{"prompt_tokens":7]}}`,
		`{"usage":{"prompt_tokens":1.5,"completion_tokens":2e1}}`, `{"usage":{"completion_tokens":00}}`,
		`{"usage":{"prompt_tokens_details":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}`,
		`{"usage":{"prompt_tokens_details":{"a":` + strings.Repeat("[", 9996) + strings.Repeat("]", 9996) + `}}}`,
		`{"usage":{"prompt_tokens_details":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`,
		`{"usage":{"prompt_tokens_details":{"a":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}}`,
		`{"usage":{"x":{"a":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}}`,
	} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile("../../proxy/testdata/chat_response.json"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, k := range []*usageKeys{&chatUsage, &responsesUsage} {
			got, ok := readRelayed(body, k)
			want, wantOK := readRelayedReference(body, k)
			if ok != wantOK || ok && got != want {
				t.Fatalf("readRelayed(%q) = %+v, %v; want %+v, %v", body, got, ok, want, wantOK)
			}
		}
	})
}
