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
			refused := n != "0"
			var r codec.Response
			if err := c.d.DecodeResponse(codec.OpGenerate, []byte(answer), &r); (err != nil) != refused {
				t.Errorf("%s DecodeResponse(%s): %v, usage %+v", c.d.Name(), answer, err, r.Usage)
			}
			if _, err := c.d.NewStreamDecoder().Decode(nil, []byte(c.name), []byte(event)); (err != nil) != refused {
				t.Errorf("%s stream Decode(%s): %v", c.d.Name(), event, err)
			}
			if rel, ok := c.d.ReadRelayed([]byte(answer)); !ok || refused && rel.Usage != (codec.Usage{}) || negative(rel.Usage) {
				t.Errorf("%s ReadRelayed(%s): ok %v, usage %+v", c.d.Name(), answer, ok, rel.Usage)
			}
			relay := codec.Relay{Dec: c.d.NewStreamDecoder()}
			ev := []byte("data: " + event + "\n\n")
			if c.name != "" {
				ev = append([]byte("event: "+c.name+"\n"), ev...)
			}
			if _, err := c.d.RelayEvent(nil, ev, []byte(event), &relay); err != nil || refused && relay.Usage != (codec.Usage{}) || negative(relay.Usage) {
				t.Errorf("%s RelayEvent(%s): %v, usage %+v", c.d.Name(), event, err, relay.Usage)
			}
		}
	}
}

func negative(u codec.Usage) bool {
	return u.Input|u.Output|u.CachedInput|u.CacheWrite|u.Reasoning|u.Units < 0
}
