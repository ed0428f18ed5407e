package anthropic_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

var wireStreams = []string{
	"messages_stream_text.sse",
	"messages_stream_thinking_tool.sse",
	"messages_stream_error.sse",
	"messages_stream_max_tokens.sse",
}

// cloneEvent copies the strings of e: a decoder's events point into its
// input and its scratch buffer, valid only until its next call.
func cloneEvent(e codec.Event) codec.Event {
	e.ID = strings.Clone(e.ID)
	e.Model = strings.Clone(e.Model)
	e.Name = strings.Clone(e.Name)
	e.Text = strings.Clone(e.Text)
	e.Arguments = strings.Clone(e.Arguments)
	e.Signature = strings.Clone(e.Signature)
	e.Data = strings.Clone(e.Data)
	e.StopSequence = strings.Clone(e.StopSequence)
	return e
}

// decodeStream decodes a whole transcript, event by event, and ends it.
func decodeStream(t testing.TB, transcript []byte) []codec.Event {
	t.Helper()
	var d anthropic.StreamDecoder
	var events, buf []codec.Event
	for _, ev := range frameSSE(t, transcript) {
		var err error
		buf, err = d.Decode(buf[:0], ev.name, ev.data)
		if err != nil {
			t.Fatalf("Decode(%s): %v", ev.data, err)
		}
		for _, e := range buf {
			events = append(events, cloneEvent(e))
		}
	}
	for _, e := range d.End(buf[:0]) {
		events = append(events, cloneEvent(e))
	}
	return events
}

// encodeStream encodes canonical events for a client, and ends the stream.
func encodeStream(events []codec.Event, info codec.StreamInfo) []byte {
	var enc anthropic.StreamEncoder
	enc.Reset(info)
	var out []byte
	for i := range events {
		out = enc.Encode(out, &events[i])
	}
	return enc.End(out)
}

// TestGoldenStreams decodes every upstream transcript to canonical events and
// encodes them for a client; decoding and encoding that output again must
// give the same bytes.
func TestGoldenStreams(t *testing.T) {
	dir := "testdata/stream"
	for _, c := range goldenCases(t, dir, ".sse", ".events.json", wireStreams...) {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join(dir, c.name)
			var events []codec.Event
			if c.in != "" {
				events = decodeStream(t, readFile(t, c.in))
				golden(t, base+".events.json", dumpEvents(t, events))
			} else {
				events = loadEvents(t, base+".events.json")
			}
			out := encodeStream(events, goldenInfo)
			golden(t, base+".out.sse", out)
			if p := testutil.AnthropicStreamError(out); p != "" {
				t.Errorf("invalid stream: %s\n%s", p, out)
			}
			again := encodeStream(decodeStream(t, out), goldenInfo)
			if !bytes.Equal(again, out) {
				t.Errorf("encode(decode(out)) differs from out:\n--- got\n%s\n--- want\n%s", again, out)
			}
		})
	}
}

// TestStreamBoundaries: the transcoded output is the same whatever the read
// boundaries of the upstream bytes, for every split point of every golden
// transcript, read as the proxy's relay reads it.
func TestStreamBoundaries(t *testing.T) {
	paths, _ := filepath.Glob("testdata/stream/*.sse")
	for _, w := range wireStreams {
		paths = append(paths, filepath.Join(wireDir, w))
	}
	tc := goldentest.NewTranscoder(new(anthropic.StreamDecoder), new(anthropic.StreamEncoder), goldenInfo)
	for _, p := range paths {
		if strings.HasSuffix(p, ".out.sse") {
			continue
		}
		in := readFile(t, p)
		want := tc.Run(t, in)
		for split := 1; split < len(in); split++ {
			if got := tc.Run(t, in[:split], in[split:]); !bytes.Equal(got, want) {
				t.Fatalf("%s split at %d:\n%s\nwant\n%s", p, split, got, want)
			}
		}
	}
}

// TestStreamMessageStartInputTokens: message_start never says 0 input
// tokens when they are known, from the upstream or from the estimate.
func TestStreamMessageStartInputTokens(t *testing.T) {
	f := func(start codec.Event, info codec.StreamInfo, want string) {
		t.Helper()
		var enc anthropic.StreamEncoder
		enc.Reset(info)
		out := enc.Encode(nil, &start)
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("message_start %s, want %s", out, want)
		}
	}
	f(codec.Event{Kind: codec.EventStart, Usage: codec.Usage{Input: 100, CachedInput: 60}}, codec.StreamInfo{InputTokens: 7},
		`"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":60,"output_tokens":1}`)
	f(codec.Event{Kind: codec.EventStart}, codec.StreamInfo{InputTokens: 7},
		`"usage":{"input_tokens":7,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}`)
	f(codec.Event{Kind: codec.EventStart, ID: "msg_up", Model: "upstream-model"}, codec.StreamInfo{ID: "msg_gw", Model: "public"},
		`{"id":"msg_up","type":"message","role":"assistant","model":"public",`)
	// An id that is not an Anthropic message id (another provider's) gives
	// way to the gateway's.
	f(codec.Event{Kind: codec.EventStart, ID: "chatcmpl-9", Model: "upstream-model"}, codec.StreamInfo{ID: "msg_gw", Model: "public"},
		`{"id":"msg_gw","type":"message","role":"assistant","model":"public",`)
	f(codec.Event{Kind: codec.EventStart, Model: "upstream-model"}, codec.StreamInfo{ID: "gw"},
		`{"id":"gw","type":"message","role":"assistant","model":"upstream-model",`)
}

// TestStreamDecoderErrors: malformed upstream events are errors, not panics,
// and an error event ends the stream.
func TestStreamDecoderErrors(t *testing.T) {
	f := func(event, data string) {
		t.Helper()
		var d anthropic.StreamDecoder
		start := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
		if _, err := d.Decode(nil, []byte("content_block_start"), []byte(start)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Decode(nil, []byte(event), []byte(data)); err == nil {
			t.Errorf("Decode(%s, %s) accepted it", event, data)
		}
	}
	f("content_block_delta", `{"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"x"}}`)
	f("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\q"}}`)
	f("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}`)
	f("content_block_delta", `{"type":"content_block_delta","index":"0","delta":{}}`)
	f("content_block_delta", `{"type":"content_block_delta","delta":{}}`)
	f("content_block_delta", `{"type":"content_block_delta",`)
	f("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"text"}}`)
	f("content_block_stop", `{"type":"content_block_stop","index":9}`)
	f("message_delta", `{"type":"message_delta","usage":{"output_tokens":"x"}}`)

	var d anthropic.StreamDecoder
	events, err := d.Decode(nil, []byte("error"), []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))
	if err != nil || len(events) != 1 || events[0].Kind != codec.EventError {
		t.Fatalf("error event: %v %+v", err, events)
	}
	if e := events[0].Err; e.Status != 429 || e.Kind != codec.KindRateLimitRequests || e.Type != "rate_limit_error" || e.Message != "slow down" {
		t.Errorf("error event decoded as %+v", e)
	}
	if events, _ = d.Decode(nil, []byte("message_stop"), []byte(`{"type":"message_stop"}`)); len(events) != 0 {
		t.Errorf("events after an error: %+v", events)
	}
	if events = d.End(nil); len(events) != 0 {
		t.Errorf("End after an error: %+v", events)
	}
}

// TestStreamHoldsMessageDelta: with an OpenAI upstream the usage comes after
// the finish; message_delta waits for it and carries both.
func TestStreamHoldsMessageDelta(t *testing.T) {
	var enc anthropic.StreamEncoder
	enc.Reset(codec.StreamInfo{InputTokens: 11})
	out := enc.Encode(nil, &codec.Event{Kind: codec.EventStart})
	out = enc.Encode(out, &codec.Event{Kind: codec.EventBlockStart, Block: codec.PartText})
	out = enc.Encode(out, &codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: "hi"})
	out = enc.Encode(out, &codec.Event{Kind: codec.EventBlockStop, Block: codec.PartText})
	n := len(out)
	out = enc.Encode(out, &codec.Event{Kind: codec.EventFinish, Stop: codec.StopMaxTokens})
	if len(out) != n {
		t.Fatalf("message_delta written before the usage: %s", out[n:])
	}
	out = enc.Encode(out, &codec.Event{Kind: codec.EventUsage, Usage: codec.Usage{Input: 13, Output: 2}})
	want := "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null}," +
		"\"usage\":{\"input_tokens\":13,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	if got := string(out[n:]); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if end := enc.End(nil); len(end) != 0 {
		t.Errorf("End wrote %s after message_stop", end)
	}
}

func TestAppendPing(t *testing.T) {
	if got := string(anthropic.AppendPing(nil)); got != "event: ping\ndata: {\"type\": \"ping\"}\n\n" {
		t.Errorf("AppendPing = %q", got)
	}
}
