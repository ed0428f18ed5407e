//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package sse_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
)

func TestZeroAllocs(t *testing.T) {
	f := func(name string, in []byte, fn func([]byte)) {
		t.Helper()
		if n := testing.AllocsPerRun(100, func() { fn(in) }); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
	nextData := func(b []byte) {
		n := sse.Next(b)
		if n == 0 {
			panic("no event")
		}
		if _, _, ok := sse.Data(b[:n]); !ok {
			panic("no data")
		}
	}
	f("Next+Data", []byte(typicalEvent), nextData)
	f("Next+Data, CRLF", []byte(openaiEvents("\r\n")[2]), nextData)
	f("Next+Data, event line", []byte(testStreams[3].events[3]), nextData)
	f("Field", []byte(testStreams[3].events[3]), func(b []byte) {
		if _, ok := sse.Field(b, "event"); !ok {
			panic("no event field")
		}
	})
	dst := make([]byte, 0, 1024)
	f("AppendData", []byte("data: a\ndata: b\n\n"), func(b []byte) { dst = sse.AppendData(dst[:0], b) })
	f("AppendEvent", []byte(openaiChunks[1]), func(b []byte) { dst = sse.AppendEvent(dst[:0], "delta", b) })
}
