//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package openai_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/openai"
)

func TestZeroAllocs(t *testing.T) {
	f := func(name string, fn func()) {
		t.Helper()
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
	chunk, usage := []byte(chunkContent), []byte(chunkUsage)
	f("ModelSpan", func() {
		if s, _ := openai.ModelSpan(chunk); s < 0 {
			panic("no model")
		}
	})
	f(`UsageSpan on "usage":null`, func() {
		if s, _ := openai.UsageSpan(chunk); s >= 0 {
			panic("usage found")
		}
	})
	f("UsageSpan on the usage chunk", func() {
		if s, _ := openai.UsageSpan(usage); s < 0 {
			panic("no usage")
		}
	})
	f("IsUsageOnlyChunk", func() {
		if !openai.IsUsageOnlyChunk(usage) || openai.IsUsageOnlyChunk(chunk) {
			panic("wrong answer")
		}
	})

	for _, c := range []struct{ name, model string }{
		{"2KB", "gpt-4o-mini"},
		{"1MB image, stream", "gpt-4o-2024-11-20"},
	} {
		body := chatRequest2KB(t)
		if c.name != "2KB" {
			body = imageRequest()
		}
		var r openai.ChatRequest
		f("Parse "+c.name, func() {
			if err := r.Parse(body); err != nil {
				panic(err)
			}
		})
		dst := make([]byte, 0, len(body)+256)
		f("AppendUpstream "+c.name, func() {
			dst = r.AppendUpstream(dst[:0], body, c.model)
		})
	}

	// The per-event work of the pass-through relay.
	ev := []byte("data: " + chunkContent + "\n\n")
	out := make([]byte, 0, 1024)
	f("relay event", func() {
		if out, _ = relayEvent(out[:0], ev, "my-model"); len(out) == 0 {
			panic("nothing relayed")
		}
	})
}
