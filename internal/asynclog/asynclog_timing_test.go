package asynclog

import (
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkWrite is one access line (300 bytes) queued, under the shipped
// binary's limit (4 MiB), the writer woken by the pending bytes alone. Run
// it with two Ps or more: with one, the writer runs only when the
// benchmark's goroutine yields, and most lines are dropped.
func BenchmarkWrite(b *testing.B) {
	w := New(io.Discard, time.Hour, 4<<20)
	defer w.Close()
	line := []byte(strings.Repeat("x", 299) + "\n")
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		w.Write(line)
	}
	b.ReportMetric(float64(w.Dropped())/float64(b.N), "dropped/op") // the writer kept up: 0
}
