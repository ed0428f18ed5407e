package proxy

import (
	"testing"
	"time"
)

// BenchmarkLineTime is an access line's start up to its request id, as
// appendLineHead writes it, against the same start with its time
// formatted by time.Time.AppendFormat, which it replaces.
func BenchmarkLineTime(b *testing.B) {
	buf := make([]byte, 0, 128)
	now := time.Now()
	x := &exchange{status: 200}
	b.Run("appendLineHead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = appendLineHead(buf[:0], shapeJSON, x, now)
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = append(buf[:0], `{"time":"`...)
			buf = now.AppendFormat(buf, time.RFC3339Nano)
			buf = append(buf, `","level":"INFO","msg":"request","id":"`...)
		}
	})
}
