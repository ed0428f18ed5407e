package sse_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
)

func BenchmarkNextEvent(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"data", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"},
		{"named", "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"},
	} {
		in := []byte(bc.in)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n, _, _, _, ok := sse.NextEvent(in); n != len(in) || !ok {
					b.Fatal(n, ok)
				}
			}
		})
	}
}
