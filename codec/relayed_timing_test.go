package codec_test

import (
	"testing"
)

// BenchmarkReadRelayedLast is what the gateway reads of a whole Anthropic
// or Gemini answer it relays (codec.ReadRelayedLast): the check, the last
// model and usage, and whether readers would differ on them.
func BenchmarkReadRelayedLast(b *testing.B) {
	for _, c := range ordinaryAnswers[1:] { // the two ReadRelayedLast reads
		body := []byte(c.body)
		b.Run(c.d.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r, ok := c.d.ReadRelayed(body); !ok || !r.HasUsage || r.Again {
					b.Fatal("not read")
				}
			}
		})
	}
}
