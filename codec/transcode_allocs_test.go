//go:build !race

package codec_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// The transcoder allocates nothing per event once its buffers have grown:
// relayed in each style, and translated between every pair of styles, in
// SSE and (for Gemini clients) in the JSON-array framing. (Reading the
// usage and the ids costs a few allocations per stream.)
func TestTranscoderAllocs(t *testing.T) {
	const deltas, perStream = 500, 4
	var out []byte
	var tc codec.Transcoder
	measure := func(t *testing.T, b []byte, reset func()) {
		t.Helper()
		run := func() {
			reset()
			var n int
			out, n = tc.Transcode(out[:0], b)
			out = tc.End(out, b[n:])
		}
		run() // grows the buffers
		testutil.AllocsN(t, 20, "a stream of "+strconv.Itoa(deltas)+" text deltas", perStream, run)
	}
	for _, s := range passStream {
		b := longStream(t, s.d.Name(), deltas)
		dec := s.d.NewStreamDecoder()
		t.Run("relayed/"+s.d.Name(), func(t *testing.T) {
			measure(t, b, func() { tc.ResetPass(s.d, codec.Relay{Model: "public-model", Dec: dec}, nil) })
		})
	}
	for _, p := range pairs() {
		b := longStream(t, p.to.name(), deltas)
		dec, enc := p.to.NewStreamDecoder(), p.from.NewStreamEncoder()
		t.Run("translated/"+p.from.name()+"_from_"+p.to.name(), func(t *testing.T) {
			measure(t, b, func() { tc.ResetTranslate(dec, enc, p.info(), nil) })
			if p.from.array != nil {
				measure(t, b, func() { tc.ResetTranslate(dec, enc, p.info(), p.from.array) })
			}
		})
	}
}

// longStream is the text stream of a style with one of its deltas repeated
// n times.
func longStream(t *testing.T, style string, n int) []byte {
	ts := textStream[style]
	events := goldentest.Events(goldentest.Read(t, ts.path))
	b := bytes.Join(events[:ts.delta+1], nil)
	b = append(b, bytes.Repeat(events[ts.delta], n)...)
	return append(b, bytes.Join(events[ts.delta+1:], nil)...)
}
