package codec_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// repeatedAnswers are whole answers on which readers differ (a model or a
// usage named twice or with escapes, a name spelled with escapes, a usage
// that repeats a count), with the usage a last-wins parser reads.
var repeatedAnswers = []struct {
	d    codec.Dialect
	body string
	want codec.Usage
}{
	{openai.Dialect, `{"id":"c","object":"chat.completion","model":"up1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1},` +
		`"model":"up2","usage":{"prompt_tokens":7,"completion_tokens":2}}`, codec.Usage{Input: 7, Output: 2}},
	{openai.Dialect, `{"id":"c","object":"chat.completion","model":"up\u0031","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"completion_tokens":3}}`,
		codec.Usage{Input: 5, Output: 3}},
	{openai.Responses, `{"id":"r","object":"response","status":"completed","model":"up1","output":[],"us\u0061ge":{"input_tokens":4,"output_tokens":1},` +
		`"usage":{"input_tokens":6,"output_tokens":2,"input_tokens_details":{"cached_tokens":1,"cached_tokens":2}}}`, codec.Usage{Input: 6, Output: 2, CachedInput: 2}},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up1","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":1},"m\u006fdel":"up2","usage":{"input_tokens":7,"output_tokens":2}}`, codec.Usage{Input: 7, Output: 2}},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up\u0031","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":1,"input_tokens":8}}`, codec.Usage{Input: 8, Output: 1}},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up1","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"thinking_tokens":2,"thinking_tokens":7}}}`, codec.Usage{Input: 5, Output: 9, Reasoning: 7}},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up1","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"thinking_tok\u0065ns":7}}}`, codec.Usage{Input: 5, Output: 9, Reasoning: 7}},
	{gemini.Dialect, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"modelVersion":"up1",` +
		`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1},"modelVersion":"up2","usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2}}`,
		codec.Usage{Input: 7, Output: 2}},
}

// TestRelayedAnswersReadAlike: a whole answer on which readers differ is
// billed as a last-wins parser reads it, by the pass-through relay and the
// translating decoder alike, and relayed (AppendRelayed, as the proxy
// writes it) as an answer that a first-wins parser (the Go SDKs) reads as
// a last-wins one does, with no model but the public one.
func TestRelayedAnswersReadAlike(t *testing.T) {
	for _, c := range repeatedAnswers {
		r, ok := c.d.ReadRelayed([]byte(c.body))
		if !ok || !r.Again || !r.HasUsage || r.Usage != c.want {
			t.Errorf("%s ReadRelayed(%s) = %+v, %v; want usage %+v, Again", c.d.Name(), c.body, r, ok, c.want)
			continue
		}
		var resp codec.Response // the Responses style has no translating decoder here
		if err := c.d.DecodeResponse(codec.OpGenerate, []byte(c.body), &resp); c.d != openai.Responses && (err != nil || resp.Usage != c.want) {
			t.Errorf("%s DecodeResponse(%s): usage %+v, %v; want %+v", c.d.Name(), c.body, resp.Usage, err, c.want)
		}
		out := r.AppendRelayed(nil, []byte(c.body), "pub")
		var last any
		if err := json.Unmarshal(out, &last); err != nil || !reflect.DeepEqual(testutil.FirstWins(out), last) || strings.Contains(string(out), "up") {
			t.Errorf("%s relayed %s as %s, which readers read differently", c.d.Name(), c.body, out)
		}
		if again, ok := c.d.ReadRelayed(out); !ok || again.Usage != c.want {
			t.Errorf("%s relayed %s as %s, read again as %+v", c.d.Name(), c.body, out, again)
		}
	}
}
