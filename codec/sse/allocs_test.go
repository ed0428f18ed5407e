//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package sse_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestZeroAllocs(t *testing.T) {
	nextData := func(b []byte) {
		n := sse.Next(b)
		if n == 0 {
			panic("no event")
		}
		if _, _, ok := sse.Data(b[:n]); !ok {
			panic("no data")
		}
	}
	typical, crlf, named := []byte(typicalEvent), []byte(openaiEvents("\r\n")[2]), []byte(testStreams[3].events[3])
	testutil.Allocs(t, "Next+Data", 0, func() { nextData(typical) })
	testutil.Allocs(t, "Next+Data, CRLF", 0, func() { nextData(crlf) })
	testutil.Allocs(t, "Next+Data, event line", 0, func() { nextData(named) })
	testutil.Allocs(t, "NextData", 0, func() {
		for _, b := range [][]byte{typical, crlf, named} {
			if n, _, _, ok := sse.NextData(b); n != len(b) || !ok {
				panic("no event")
			}
		}
	})
	testutil.Allocs(t, "Field", 0, func() {
		if _, ok := sse.Field(named, "event"); !ok {
			panic("no event field")
		}
	})
	dst := make([]byte, 0, 1024)
	multi, chunk := []byte("data: a\ndata: b\n\n"), []byte(openaiChunks[1])
	testutil.Allocs(t, "AppendData", 0, func() { dst = sse.AppendData(dst[:0], multi) })
	testutil.Allocs(t, "AppendEvent", 0, func() { dst = sse.AppendEvent(dst[:0], "delta", chunk) })
}
