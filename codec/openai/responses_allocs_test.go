//go:build !race

package openai_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestResponsesRelayZeroAllocs relays a whole Responses stream, lifecycle
// events (id, status, usage, model) and deltas, with no allocation once
// the transcoder's buffers have grown.
func TestResponsesRelayZeroAllocs(t *testing.T) {
	stream := []byte(testutil.ResponseStream("resp_7", "gpt-4o-2024-08-06", "Hel", "lo", " there"))
	tc := new(codec.Transcoder)
	out := make([]byte, 0, 2*len(stream))
	testutil.Allocs(t, "a Responses stream relayed", 0, func() {
		tc.ResetPass(openai.Responses, codec.Relay{Model: "fast"}, nil)
		o, n := tc.Transcode(out[:0], stream)
		if n != len(stream) || tc.Err() != nil || len(tc.Relayed().ID) == 0 || len(o) == 0 {
			panic("not relayed")
		}
	})
	body := []byte(testutil.ResponseObject("resp_1", "gpt-4o", "completed", "Hi"))
	testutil.Allocs(t, "a whole response read", 0, func() {
		if r, ok := openai.Responses.ReadRelayed(body); !ok || !r.HasUsage {
			panic("not read")
		}
		if id, _ := openai.ResponseState(body); id == nil {
			panic("no id")
		}
	})
}
