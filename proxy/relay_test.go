package proxy

import (
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// TestRawRelayIgnoresTranscoder: a raw relay (a media answer) neither uses
// nor reads its transcoder, which a pooled relay keeps as an earlier
// stream left it: broken by an event it could not read, or ended by an
// error the upstream reported. The raw bytes still go through whole, the
// usage is the raw stream's own, and no failure is reported.
func TestRawRelayIgnoresTranscoder(t *testing.T) {
	const body = "data: {\"type\":\"transcript.text.delta\",\"delta\":\"Hi\"}\n\n" +
		"data: {\"type\":\"transcript.text.done\",\"text\":\"Hi\",\"usage\":{\"input_tokens\":14,\"output_tokens\":45}}\n\n" +
		"data: {\"type\":\"transcript.te" // a last event cut short: held to read, relayed all the same
	f := func(earlier string) {
		t.Helper()
		rl := &relay{in: make([]byte, relayBufSize), x: &exchange{}}
		rl.tc.ResetTranslate(anthropic.Dialect.NewStreamDecoder(), openai.Dialect.NewStreamEncoder(), codec.StreamInfo{Model: "m"}, nil)
		rl.tc.Transcode(nil, []byte(earlier))
		rl.tc.Release()
		if rl.tc.Err() == nil && rl.tc.Failure() == "" {
			t.Fatalf("the earlier stream %q left its transcoder clean: the test needs it otherwise", earlier)
		}
		rl.raw, rl.eventUsage, rl.body = true, openai.TranscriptUsage, strings.NewReader(body)
		var got []byte
		for rl.fill(1 << 20) {
			got = append(got, rl.out...)
			rl.dropOut()
		}
		if string(got) != body || rl.failed != nil {
			t.Fatalf("after %q: relayed %q (failed: %v), want %q", earlier, got, rl.failed, body)
		}
		usage, failure := rl.outcome()
		if usage != (codec.Usage{Input: 14, Output: 45}) || failure != "" {
			t.Errorf("after %q: usage %+v, failure %q; want the raw stream's usage and no failure", earlier, usage, failure)
		}
		if e := rl.failure(); strings.Contains(e.Message, "could not be read") {
			t.Errorf("after %q: a raw relay's failure is the earlier stream's: %+v", earlier, e)
		}
	}
	f("event: ping\ndata: {not json\n\n")
	f("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
}
