package codec_test

import (
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// TestNegativeCountsRefused: an upstream's usage with a negative token
// count is no usage, in every style, whole or streamed: translated, the
// answer is refused (a 502, or the stream's error event), as for any count
// that is no count; relayed as sent, the answer or event passes as the JSON
// it is and bills nothing, so that no usage row or limit is handed a
// negative count. The same answer with the count at 0 is read.
func TestNegativeCountsRefused(t *testing.T) {
	for _, c := range []struct {
		d            codec.Dialect
		answer, name string // the whole answer; name the event it is streamed as
		event        string // a stream event with @N@ for the count
	}{
		{openai.Dialect, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":@N@,"completion_tokens":2}}`,
			"", `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":@N@,"completion_tokens":2}}`},
		{openai.Dialect, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":@N@}}}`,
			"", `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":@N@}}}`},
		{anthropic.Dialect, `{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":@N@,"output_tokens":2}}`,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":@N@}}`},
		{gemini.Dialect, `{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":@N@}}`,
			"", `{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":@N@,"totalTokenCount":3}}`},
		{gemini.Dialect, `{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":@N@,"candidatesTokenCount":2}}`,
			"", `{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":3,"cachedContentTokenCount":@N@}}`},
	} {
		for _, n := range []string{"-1", "0"} {
			answer, event := strings.ReplaceAll(c.answer, "@N@", n), strings.ReplaceAll(c.event, "@N@", n)
			checkUsageRead(t, c.d, c.name, answer, event, n != "0")
		}
	}
}

// TestCountSumsPastAnIntRefused: Gemini's Input is promptTokenCount plus
// toolUsePromptTokenCount and its Output candidatesTokenCount plus
// thoughtsTokenCount; counts whose sum is past an int (which wrapped to a
// negative count, billed in every style) are no counts, as a negative one
// is. The same counts at 2^53 are read.
func TestCountSumsPastAnIntRefused(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"promptTokenCount", "toolUsePromptTokenCount"}, {"candidatesTokenCount", "thoughtsTokenCount"},
	} {
		for _, n := range []string{"9223372036854775807", "9007199254740992"} {
			usage := `"usageMetadata":{"` + c.a + `":` + n + `,"` + c.b + `":` + n + `}`
			answer := `{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP"}],` + usage + `}`
			event := `{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"}}],` + usage + `}`
			checkUsageRead(t, gemini.Dialect, "", answer, event, len(n) > 16)
		}
	}
}

// TestCountsPastATotalRefused: OpenAI's counts of 19 digits are no
// counts, as Anthropic's are (rawjson.Count): two such summed by
// Usage.Total, which the limits are settled with, wrapped to a negative
// count. Counts of 18 digits are read.
func TestCountsPastATotalRefused(t *testing.T) {
	for _, n := range []string{"9223372036854775807", "999999999999999999"} {
		usage := `"usage":{"prompt_tokens":` + n + `,"completion_tokens":` + n + `}`
		answer := `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` + usage + `}`
		event := `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[],` + usage + `}`
		checkUsageRead(t, openai.Dialect, "", answer, event, len(n) > 18)
	}
}

// checkUsageRead checks that the whole answer and the stream event (named
// name) are refused when translated and bill nothing when relayed, when
// refused; else read; and that no usage read has a negative count or
// total.
func checkUsageRead(t *testing.T, d codec.Dialect, name, answer, event string, refused bool) {
	t.Helper()
	var r codec.Response
	if err := d.DecodeResponse(codec.OpGenerate, []byte(answer), &r); (err != nil) != refused || negative(r.Usage) {
		t.Errorf("%s DecodeResponse(%s): %v, usage %+v", d.Name(), answer, err, r.Usage)
	}
	events, err := d.NewStreamDecoder().Decode(nil, []byte(name), []byte(event))
	if (err != nil) != refused {
		t.Errorf("%s stream Decode(%s): %v", d.Name(), event, err)
	}
	for _, e := range events {
		if negative(e.Usage) {
			t.Errorf("%s stream Decode(%s): usage %+v", d.Name(), event, e.Usage)
		}
	}
	if rel, ok := d.ReadRelayed([]byte(answer)); !ok || refused && rel.Usage != (codec.Usage{}) || negative(rel.Usage) {
		t.Errorf("%s ReadRelayed(%s): ok %v, usage %+v", d.Name(), answer, ok, rel.Usage)
	}
	relay := codec.Relay{Dec: d.NewStreamDecoder()}
	ev := []byte("data: " + event + "\n\n")
	if name != "" {
		ev = append([]byte("event: "+name+"\n"), ev...)
	}
	if _, err := d.RelayEvent(nil, ev, []byte(event), &relay); err != nil || refused && relay.Usage != (codec.Usage{}) || negative(relay.Usage) {
		t.Errorf("%s RelayEvent(%s): %v, usage %+v", d.Name(), event, err, relay.Usage)
	}
}

func negative(u codec.Usage) bool {
	return u.Input|u.Output|u.CachedInput|u.CacheWrite|u.Reasoning|u.Units|u.Total() < 0
}
