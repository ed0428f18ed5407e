//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package gemini_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestAllocs(t *testing.T) {
	// The per-event work of a stream: a text chunk in, a text chunk out.
	var d gemini.StreamDecoder
	events := make([]codec.Event, 0, 8)
	events, _ = d.Decode(events, nil, []byte(chunkFirst))
	for _, chunk := range []string{chunkPlain, chunkText} { // the second has escapes
		data := []byte(chunk)
		testutil.Allocs(t, "StreamDecoder.Decode", 0, func() {
			var err error
			if events, err = d.Decode(events[:0], nil, data); err != nil || len(events) != 1 {
				panic("bad chunk")
			}
		})
	}
	var s gemini.StreamEncoder
	s.Reset(codec.StreamInfo{Model: "gemini-2.5-flash", ID: "x", InputTokens: 12})
	e := codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: "a \"quoted\" <delta>\n"}
	out := make([]byte, 0, 1024)
	testutil.Allocs(t, "StreamEncoder.Encode", 0, func() { out = s.Encode(out[:0], &e) })

	var sp gemini.ArraySplitter
	arr := []byte(`[{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}` + "\n,\r\n" + `{"x":"]}"}` + "\n]")
	testutil.Allocs(t, "ArraySplitter.Next", 0, func() {
		sp.Reset()
		for buf := arr; len(buf) > 0; {
			_, n, _ := sp.Next(buf)
			buf = buf[n:]
		}
	})

	// A 2 KB request, translated both ways with reused buffers (DESIGN §5:
	// at most 20 allocations).
	body := chatRequest2KB(t)
	var r codec.Request
	dst := make([]byte, 0, 4096)
	testutil.Allocs(t, "DecodeRequest+AppendRequest 2KB", 20, func() {
		if err := gemini.DecodeRequest(body, &r); err != nil {
			panic(err)
		}
		dst, _, _ = gemini.AppendRequest(dst[:0], &r)
	})
	testutil.Allocs(t, "AppendRequest 2KB", 0, func() { dst, _, _ = gemini.AppendRequest(dst[:0], &r) })
}
