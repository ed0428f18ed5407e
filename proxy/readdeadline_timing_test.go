package proxy

import (
	"net"
	"testing"
	"time"
)

// BenchmarkReadDeadline is a kept-alive request's two read deadlines on
// a loopback TCP connection, as fasthttp sets them: through
// lazyReadDeadline, and on the connection itself.
func BenchmarkReadDeadline(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			var buf [1]byte
			c.Read(buf[:]) //nolint:errcheck // until the benchmark closes its end
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
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
