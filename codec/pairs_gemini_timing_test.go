package codec_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
)

// BenchmarkPairsTranscodeGeminiDeltas is BenchmarkPairsTranscodeTextDelta
// from a Gemini upstream as a stream sends its deltas: each with the
// output and total tokens one more than the last (of as many digits),
// where the benchmark above repeats one delta. "escaped" is the wire
// fixture's delta (an escape and two "°"), "plain" the same text as
// Gemini mostly spells one, without the escape, "emoji" with two emoji
// (four-byte UTF-8 sequences) in the escape's place.
func BenchmarkPairsTranscodeGeminiDeltas(b *testing.B) {
	ts := textStream["gemini"]
	events := goldentest.Events(goldentest.Read(b, ts.path))
	texts := map[string][]byte{"escaped": []byte(`\u003c`), "plain": []byte(`below`), "emoji": []byte(`below 🧥🌡️`)}
	for _, p := range pairs() {
		if p.to.name() != "gemini" {
			continue
		}
		for _, kind := range []string{"escaped", "plain", "emoji"} {
			var deltas [][]byte
			for k := range 64 {
				d := bytes.Replace(events[ts.delta], []byte(`\u003c`), texts[kind], 1)
				d = bytes.Replace(d, []byte(`"candidatesTokenCount": 35`), fmt.Appendf(nil, `"candidatesTokenCount": %d`, 20+k), 1)
				deltas = append(deltas, bytes.Replace(d, []byte(`"totalTokenCount": 358`), fmt.Appendf(nil, `"totalTokenCount": %d`, 300+k), 1))
			}
			tc := newTranscoder(p, nil)
			start := func() {
				tc.Reset()
				for _, ev := range events[:ts.delta] {
					tc.Write(ev)
				}
			}
			start()
			if out, _ := tc.Transcode(nil, deltas[0]); tc.Err() != nil || !bytes.Contains(out, []byte("data: ")) {
				b.Fatalf("the delta transcodes to nothing: %v", tc.Err())
			}
			text := len(ts.text) - 2 - len(`\u003c`) + len(texts[kind]) // without its quotes
			b.Run(filepath.Base(p.dir)+"/"+kind, func(b *testing.B) {
				transcodeDeltas(b, tc, start, deltas, deltasPerStream(text, streamText))
			})
		}
	}
}
