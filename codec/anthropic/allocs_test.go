//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package anthropic_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestAllocs(t *testing.T) {
	// The text delta: the bulk of every stream, transcoded with none.
	var d anthropic.StreamDecoder
	var enc anthropic.StreamEncoder
	enc.Reset(codec.StreamInfo{Model: "claude-public", InputTokens: 10})
	events, _ := d.Decode(nil, []byte("content_block_start"), []byte(blockStartData))
	out := make([]byte, 0, 4096)
	for i := range events {
		out = enc.Encode(out, &events[i])
	}
	name, data := []byte("content_block_delta"), []byte(textDeltaData)
	events = make([]codec.Event, 0, 4)
	testutil.Allocs(t, "StreamDecoder text delta", 0, func() {
		events, _ = d.Decode(events[:0], name, data)
	})
	ev := events[0]
	testutil.Allocs(t, "StreamEncoder text delta", 0, func() {
		out = enc.Encode(out[:0], &ev)
	})
	escaped := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"line one\nline \"two\""}}`)
	testutil.Allocs(t, "StreamDecoder escaped text delta", 0, func() {
		events, _ = d.Decode(events[:0], name, escaped)
	})

	// Whole exchanges: the canonical request is reused, as the proxy pools it.
	body := request2KB(t)
	var r codec.Request
	testutil.Allocs(t, "DecodeRequest 2KB", 4, func() {
		if err := anthropic.DecodeRequest(body, &r); err != nil {
			panic(err)
		}
	})
	dst := make([]byte, 0, 4096)
	testutil.Allocs(t, "AppendRequest 2KB", 0, func() {
		dst, _, _ = anthropic.AppendRequest(dst[:0], &r)
	})
	var resp codec.Response
	if err := anthropic.DecodeResponse(readFile(t, wireDir+"/messages_response_thinking_tool.json"), &resp); err != nil {
		t.Fatal(err)
	}
	testutil.Allocs(t, "AppendResponse", 0, func() {
		dst = anthropic.AppendResponse(dst[:0], &resp, codec.StreamInfo{Model: "claude-public"})
	})
	e := codec.Error{Status: 529, Kind: codec.KindUnavailable, Message: "Overloaded"}
	testutil.Allocs(t, "AppendStreamError", 0, func() {
		dst = anthropic.AppendStreamError(dst[:0], &e)
	})
}
