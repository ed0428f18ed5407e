package anthropic_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
)

// TestGoldenResponses decodes every upstream response to canonical and
// encodes the canonical response for a client, then checks that decoding
// and encoding the output again changes nothing.
func TestGoldenResponses(t *testing.T) {
	dir := "testdata/response"
	for _, c := range goldenCases(t, dir, ".in.json", ".canonical.json", "messages_response_thinking_tool.json") {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join(dir, c.name)
			var r codec.Response
			if c.in != "" {
				if err := anthropic.DecodeResponse(readFile(t, c.in), &r); err != nil {
					t.Fatal(err)
				}
				golden(t, base+".canonical.json", dumpJSON(t, &r))
			} else {
				loadCanonical(t, base+".canonical.json", &r)
			}
			out := anthropic.AppendResponse(nil, &r, goldenInfo)
			golden(t, base+".out.json", indent(t, out))

			var r2 codec.Response
			if err := anthropic.DecodeResponse(out, &r2); err != nil {
				t.Fatalf("decoding the encoded response: %v\n%s", err, out)
			}
			if out2 := anthropic.AppendResponse(nil, &r2, goldenInfo); !bytes.Equal(out, out2) {
				t.Errorf("encode(decode(out)) differs from out:\n%s\n%s", out2, out)
			}
			if c.in != "" {
				// Only the model (the public name) and blocks without a
				// canonical kind may change.
				r2.Model = r.Model
				if a, b := sameShape(t, &r), sameShape(t, &r2); !bytes.Equal(a, b) {
					t.Errorf("canonical response changed in the round trip:\n%s\n%s", a, b)
				}
			}
		})
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	f := func(body string) {
		t.Helper()
		var r codec.Response
		if err := anthropic.DecodeResponse([]byte(body), &r); err == nil {
			t.Errorf("DecodeResponse(%s) accepted it", body)
		}
	}
	f(``)
	f(`{`)
	f(`[]`)
	f(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	f(`{"type":"completion","completion":"hi"}`)
	f(`{"type":"message","content":"text"}`)
	f("{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"a\\q\"}]}")
}

func TestStopReasons(t *testing.T) {
	f := func(wire string, canon codec.StopReason, back string) {
		t.Helper()
		if got := anthropic.ParseStopReason(wire); got != canon {
			t.Errorf("ParseStopReason(%q) = %v, want %v", wire, got, canon)
		}
		if got := anthropic.StopReasonString(canon); got != back {
			t.Errorf("StopReasonString(%v) = %q, want %q", canon, got, back)
		}
	}
	f("end_turn", codec.StopEnd, "end_turn")
	f("max_tokens", codec.StopMaxTokens, "max_tokens")
	f("stop_sequence", codec.StopSequence, "stop_sequence")
	f("tool_use", codec.StopToolUse, "tool_use")
	f("pause_turn", codec.StopPause, "pause_turn")
	f("refusal", codec.StopContentFilter, "refusal")
	f("model_context_window_exceeded", codec.StopMaxTokens, "max_tokens")
	f("", codec.StopUnknown, "end_turn")
	f("compaction", codec.StopUnknown, "end_turn")
	if got := anthropic.StopReasonString(codec.StopError); got != "end_turn" {
		t.Errorf("StopError → %q", got)
	}
	if got := anthropic.StopReasonString(codec.StopReason(200)); got != "end_turn" {
		t.Errorf("out of range → %q", got)
	}
}

// TestUsageMapping: canonical Input includes cached tokens, read and
// written; Anthropic's input_tokens does not, and the three counts survive
// a round trip.
func TestUsageMapping(t *testing.T) {
	body := []byte(`{"id":"m","type":"message","model":"x","content":[],"stop_reason":"end_turn",` +
		`"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":7,"output_tokens_details":{"thinking_tokens":3}}}`)
	var r codec.Response
	if err := anthropic.DecodeResponse(body, &r); err != nil {
		t.Fatal(err)
	}
	want := codec.Usage{Input: 1110, CachedInput: 1000, CacheWrite: 100, Output: 7, Reasoning: 3}
	if r.Usage != want {
		t.Fatalf("usage = %+v, want %+v", r.Usage, want)
	}
	out := anthropic.AppendResponse(nil, &r, codec.StreamInfo{})
	if !bytes.Contains(out, []byte(`"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":7,"output_tokens_details":{"thinking_tokens":3}}`)) {
		t.Errorf("usage encoded as %s", out)
	}
}
