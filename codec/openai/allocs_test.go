//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package openai_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestZeroAllocs(t *testing.T) {
	for _, c := range []struct{ name, model string }{
		{"2KB", "gpt-4o-mini"},
		{"1MB image, stream", "gpt-4o-2024-11-20"},
	} {
		body := chatRequest2KB(t)
		if c.name != "2KB" {
			body = imageRequest()
		}
		var r openai.ChatRequest
		testutil.Allocs(t, "Parse "+c.name, 0, func() {
			if err := r.Parse(body); err != nil {
				panic(err)
			}
		})
		dst := make([]byte, 0, len(body)+256)
		testutil.Allocs(t, "AppendUpstream "+c.name, 0, func() {
			dst = r.AppendUpstream(dst[:0], body, c.model)
		})
	}

	// The per-event work of the pass-through relay.
	ev := []byte("data: " + chunkContent + "\n\n")
	out := make([]byte, 0, 1024)
	testutil.Allocs(t, "relay event", 0, func() {
		if out, _ = relayEvent(out[:0], ev, "my-model"); len(out) == 0 {
			panic("nothing relayed")
		}
	})
}
