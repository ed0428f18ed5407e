package sse_test

import (
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// BenchmarkNextData frames one typical event and reads its data: with Next
// and Data, and with NextData's one look.
func BenchmarkNextData(b *testing.B) {
	for _, c := range []struct{ name, ev string }{
		{"LF", typicalEvent},
		{"CRLF", openaiEvents("\r\n")[2]},
		{"event_line", testStreams[3].events[3]},
	} {
		ev := []byte(c.ev)
		for _, f := range []struct {
			name string
			next func([]byte) (int, bool)
		}{
			{"Next+Data", func(ev []byte) (int, bool) {
				n := sse.Next(ev)
				_, _, ok := sse.Data(ev[:n])
				return n, ok
			}},
			{"NextData", func(ev []byte) (int, bool) {
				n, _, _, ok := sse.NextData(ev)
				return n, ok
			}},
		} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(ev)))
				for b.Loop() {
					if n, ok := f.next(ev); !ok || n != len(ev) {
						b.Fatal("bad framing")
					}
				}
			})
		}
	}
}

// BenchmarkStream frames a whole stream as the relay loop does, with data.
func BenchmarkStream(b *testing.B) {
	for _, s := range testStreams[:4] {
		b.Run(s.name, func(b *testing.B) {
			in := s.bytes()
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				buf, events := in, 0
				for {
					n := sse.Next(buf)
					if n == 0 {
						break
					}
					sse.Data(buf[:n])
					buf = buf[n:]
					events++
				}
				if events != len(s.events) {
					b.Fatalf("%d events, want %d", events, len(s.events))
				}
			}
			b.ReportMetric(float64(len(s.events)), "events/op")
		})
	}
}

// BenchmarkNextLargeEvent frames one 1 MiB event, such as an image in a response.
func BenchmarkNextLargeEvent(b *testing.B) {
	ev := []byte("data: {\"b64\":\"" + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ", 1<<20/44) + "\"}\n\n")
	b.ReportAllocs()
	b.SetBytes(int64(len(ev)))
	for b.Loop() {
		if sse.Next(ev) != len(ev) {
			b.Fatal("bad framing")
		}
	}
}
