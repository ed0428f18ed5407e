//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package openai_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestTranslateAllocs checks the DESIGN §5 allocation budgets: none per
// text-delta stream event, at most 20 for a 2 KB request translation.
func TestTranslateAllocs(t *testing.T) {
	for _, c := range []struct{ name, first, data string }{
		{"text delta", chunkRole, chunkContent},
		{"escaped text delta", chunkRole, textEscaped},
		{"finish chunk", chunkRole, chunkFinish},
		{"tool arguments delta", toolArgsStart, toolArgsDelta},
	} {
		d := new(openai.StreamDecoder)
		events := make([]codec.Event, 0, 8)
		data := []byte(c.data)
		// The first chunk (a tool call's first fragment allocates its id
		// and name), then one read in full that keeps the prefix: the
		// steady state that the budget is about starts after them.
		for _, b := range [][]byte{[]byte(c.first), data} {
			if _, err := d.Decode(events[:0], nil, b); err != nil {
				t.Fatal(err)
			}
		}
		testutil.Allocs(t, "StreamDecoder "+c.name, 0, func() {
			var err error
			if events, err = d.Decode(events[:0], nil, data); err != nil {
				panic(err)
			}
		})
	}

	// Chunks whose prefixes differ are read in full every time.
	d := new(openai.StreamDecoder)
	events := make([]codec.Event, 0, 8)
	a, b := []byte(chunkContent), []byte(chunkNoUsage)
	d.Decode(events[:0], nil, a)
	testutil.Allocs(t, "StreamDecoder text deltas read in full", 0, func() {
		var err error
		if events, err = d.Decode(events[:0], nil, b); err != nil {
			panic(err)
		}
		if events, err = d.Decode(events[:0], nil, a); err != nil {
			panic(err)
		}
	})

	var e openai.StreamEncoder
	out := make([]byte, 0, 4096)
	for _, ev := range []codec.Event{
		{Kind: codec.EventDelta, Block: codec.PartText, Text: " world"},
		{Kind: codec.EventDelta, Block: codec.PartThinking, Text: " hmm", Signature: "c2ln"},
		{Kind: codec.EventDelta, Block: codec.PartToolCall, Arguments: `{"a":1}`},
	} {
		testutil.Allocs(t, "StreamEncoder "+ev.Block.String()+" delta", 0, func() {
			e.Reset(testInfo)
			out = e.Encode(out[:0], &codec.Event{Kind: codec.EventStart})
			out = e.Encode(out[:0], &codec.Event{Kind: codec.EventBlockStart, Block: ev.Block, ID: "call_1", Name: "f"})
			out = e.Encode(out[:0], &ev)
			out = e.Encode(out[:0], &codec.Event{Kind: codec.EventBlockStop, Block: ev.Block})
			out = e.End(out[:0])
		})
	}

	body := chatRequest2KB(t)
	var r codec.Request
	dst := make([]byte, 0, 4096)
	testutil.Allocs(t, "DecodeRequest+AppendRequest 2KB", 20, func() {
		if err := openai.DecodeRequest(body, &r); err != nil {
			panic(err)
		}
		dst, _, _ = openai.AppendRequest(dst[:0], &r)
	})
	testutil.Allocs(t, "AppendRequest 2KB", 0, func() {
		dst, _, _ = openai.AppendRequest(dst[:0], &r)
	})

	resp := read(t, wireDir+"/chat_response_tool_calls.json")
	var cr codec.Response
	if err := openai.DecodeResponse(resp, &cr); err != nil {
		t.Fatal(err)
	}
	testutil.Allocs(t, "AppendResponse", 0, func() {
		dst = openai.AppendResponse(dst[:0], &cr, testInfo)
	})
}
