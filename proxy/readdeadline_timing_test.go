//go:build linux

package proxy

import (
	"testing"
	"time"
)

// BenchmarkReadDeadline is a kept-alive request's two read deadlines on
// a loopback TCP connection (tcpPair), as fasthttp sets them: through
// lazyReadDeadline, and on the connection itself.
func BenchmarkReadDeadline(b *testing.B) {
	conn, _ := tcpPair(b)
	b.Run("lazy", func(b *testing.B) {
		var d lazyReadDeadline
		b.ReportAllocs()
		for b.Loop() {
			d.set(conn, time.Now().Add(2*time.Minute)) //nolint:errcheck
			d.set(conn, time.Now().Add(2*time.Minute)) //nolint:errcheck
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) //nolint:errcheck
			conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) //nolint:errcheck
		}
	})
}
