package codec_test

import (
	"cmp"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// ordinaryAnswers are whole answers as each style's API sends them, on
// which every reader agrees: openai's the proxy's testdata.
var ordinaryAnswers = []struct {
	d    codec.Dialect
	body string
}{
	{openai.Dialect, string(must(os.ReadFile("../proxy/testdata/chat_response.json")))},
	{anthropic.Dialect, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello! How can I help you today?"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":12,"service_tier":"standard"}}`},
	{gemini.Dialect, `{"candidates":[{"content":{"parts":[{"text":"Hello! How can I help you today?"}],"role":"model"},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9,"totalTokenCount":30,"promptTokensDetails":[{"modality":"TEXT","tokenCount":5}],` +
		`"thoughtsTokenCount":16},"modelVersion":"gemini-2.5-flash","responseId":"abc"}`},
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// repeatedAnswers are whole answers on which readers differ (a model or a
// usage named twice or with escapes, a name spelled with escapes, a usage
// that repeats a count), with the usage a last-wins parser reads and the
// answer relayed: out with @M@ where the model written stands, last the
// upstream's last model as it is spelled (what a kept model becomes).
var repeatedAnswers = []struct {
	d         codec.Dialect
	body      string
	want      codec.Usage
	out, last string
}{
	{openai.Dialect, `{"id":"c","object":"chat.completion","model":"up1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1},` +
		`"model":"up2","usage":{"prompt_tokens":7,"completion_tokens":2}}`, codec.Usage{Input: 7, Output: 2},
		`{"id":"c","object":"chat.completion","model":"@M@","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":2},` +
			`"model":"@M@","usage":{"prompt_tokens":7,"completion_tokens":2}}`, "up2"},
	{openai.Dialect, `{"id":"c","object":"chat.completion","model":"up\u0031","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"completion_tokens":3}}`,
		codec.Usage{Input: 5, Output: 3},
		`{"id":"c","object":"chat.completion","model":"@M@","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`, `up\u0031`},
	{openai.Dialect, `{"id":"c","object":"chat.completion","model":"up1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"total_tokens":3,"completion_tokens":1,"total_tokens":99}}`,
		codec.Usage{Input: 5, Output: 1},
		`{"id":"c","object":"chat.completion","model":"@M@","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":99}}`, "up1"},
	{openai.Responses, `{"id":"r","object":"response","status":"completed","model":"up1","output":[],"us\u0061ge":{"input_tokens":4,"output_tokens":1},` +
		`"usage":{"input_tokens":6,"output_tokens":2,"input_tokens_details":{"cached_tokens":1,"cached_tokens":2}}}`, codec.Usage{Input: 6, Output: 2, CachedInput: 2},
		`{"id":"r","object":"response","status":"completed","model":"@M@","output":[],"us\u0061ge":{"input_tokens":6,"output_tokens":2,"input_tokens_details":{"cached_tokens":2}},` +
			`"usage":{"input_tokens":6,"output_tokens":2,"input_tokens_details":{"cached_tokens":2}}}`, "up1"},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up1","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":1},"m\u006fdel":"up2","usage":{"input_tokens":7,"output_tokens":2}}`, codec.Usage{Input: 7, Output: 2},
		`{"id":"m","type":"message","role":"assistant","content":[],"model":"@M@","stop_reason":"end_turn",` +
			`"usage":{"input_tokens":7,"output_tokens":2},"m\u006fdel":"@M@","usage":{"input_tokens":7,"output_tokens":2}}`, "up2"},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up\u0031","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":1,"input_tokens":8}}`, codec.Usage{Input: 8, Output: 1},
		`{"id":"m","type":"message","role":"assistant","content":[],"model":"@M@","stop_reason":"end_turn",` +
			`"usage":{"output_tokens":1,"input_tokens":8}}`, `up\u0031`},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up1","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"thinking_tokens":2,"thinking_tokens":7}}}`, codec.Usage{Input: 5, Output: 9, Reasoning: 7},
		`{"id":"m","type":"message","role":"assistant","content":[],"model":"@M@","stop_reason":"end_turn",` +
			`"usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"thinking_tokens":7}}}`, "up1"},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up1","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"thinking_tok\u0065ns":7}}}`, codec.Usage{Input: 5, Output: 9, Reasoning: 7},
		`{"id":"m","type":"message","role":"assistant","content":[],"model":"@M@","stop_reason":"end_turn",` +
			`"usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"thinking_tok\u0065ns":7}}}`, "up1"},
	{anthropic.Dialect, `{"id":"m","type":"message","role":"assistant","content":[],"model":"up1","stop_reason":"end_turn",` +
		`"usage":{"input_tokens":5,"service_tier":"standard","output_tokens":1,"service_tier":"priority"}}`, codec.Usage{Input: 5, Output: 1},
		`{"id":"m","type":"message","role":"assistant","content":[],"model":"@M@","stop_reason":"end_turn",` +
			`"usage":{"input_tokens":5,"output_tokens":1,"service_tier":"priority"}}`, "up1"},
	{gemini.Dialect, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"modelVersion":"up1",` +
		`"usageMetadata":{"promptTokenCount":5,"totalTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":99}}`, codec.Usage{Input: 5, Output: 1},
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"modelVersion":"@M@",` +
			`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"totalTokenCount":99}}`, "up1"},
	{gemini.Dialect, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"modelVersion":"up1",` +
		`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1},"modelVersion":"up2","usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2}}`,
		codec.Usage{Input: 7, Output: 2},
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"modelVersion":"@M@",` +
			`"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2},"modelVersion":"@M@","usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2}}`, "up2"},
}

// TestRelayedAnswersReadAlike: a whole answer on which readers differ is
// billed as a last-wins parser reads it, by the pass-through relay and the
// translating decoder alike, and relayed (AppendRelayed, as the proxy
// writes it, with the model renamed or kept) as an answer that a
// first-wins parser (the Go SDKs) reads as a last-wins one does: its model
// and usage made alike, nothing else changed. An ordinary answer is not
// rewritten.
func TestRelayedAnswersReadAlike(t *testing.T) {
	for _, c := range ordinaryAnswers {
		if r, ok := c.d.ReadRelayed([]byte(c.body)); !ok || r.Again || !r.HasUsage {
			t.Errorf("%s ReadRelayed(%s) = %+v, %v; want usage, not Again", c.d.Name(), c.body, r, ok)
		}
	}
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
		for _, model := range []string{"pub", ""} { // "": the upstream's kept
			out := r.AppendRelayed(nil, []byte(c.body), model)
			want := strings.ReplaceAll(c.out, "@M@", cmp.Or(model, c.last))
			if last := testutil.LastWins(out); last == nil || !reflect.DeepEqual(testutil.FirstWins(out), last) || string(out) != want {
				t.Errorf("%s relayed %s (model %q) as\n%s, want\n%s", c.d.Name(), c.body, model, out, want)
			}
			if again, ok := c.d.ReadRelayed(out); !ok || again.Usage != c.want {
				t.Errorf("%s relayed %s as %s, read again as %+v", c.d.Name(), c.body, out, again)
			}
		}
	}
}
