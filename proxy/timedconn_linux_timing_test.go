//go:build linux

package proxy

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/proctime"
)

// BenchmarkTimedConnWait is a relay's read of an upstream event that has
// not come yet, on loopback: the read finds nothing, runs beforeWait, waits
// for the socket and reads the event, which the upstream writes once asked.
// cpu-ns/op is the process's CPU, system calls included (both ends'), per
// event.
func BenchmarkTimedConnWait(b *testing.B) {
	client, server := tcpPair(b)
	c := newTimedConn(client, time.Minute, time.Minute)
	waits := 0
	c.beforeWait = func() bool { waits++; return true }
	ev := []byte("data: " + chunkWireForBench + "\n\n")
	next := make(chan struct{})
	defer close(next)
	go func() {
		for range next {
			server.Write(ev) //nolint:errcheck // the reader fails the benchmark
		}
	}()
	buf := make([]byte, 4096)
	b.ReportAllocs()
	start := proctime.CPU()
	for b.Loop() {
		next <- struct{}{}
		for got := 0; got < len(ev); {
			n, err := c.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
	b.ReportMetric(float64(proctime.CPU()-start)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(waits)/float64(b.N), "waits/op")
}

// chunkWireForBench is a text delta as api.openai.com sends it.
const chunkWireForBench = `{"id":"chatcmpl-CkR9bX4fY1oAqN6zP0dA3hHj5uL8c","object":"chat.completion.chunk","created":1795252445,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6f2eabb9a5","choices":[{"index":0,"delta":{"content":" is"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"dBNii"}`

// BenchmarkTimedConnWrite is an upstream request's write on loopback
// (3 KB, which the socket takes at once) under a write deadline that
// changes with each request, as the HTTP client sets it: timedConn, which
// sets none unless the write waits, and setting it on every write as the
// connection did before. In heads every write is a request's head (as if
// its answer had been read), which looks at the clock once.
func BenchmarkTimedConnWrite(b *testing.B) {
	client, server := tcpPair(b)
	go io.Copy(io.Discard, server) //nolint:errcheck // until the benchmark closes it
	p := make([]byte, 3000)
	start := time.Now().Add(10 * time.Minute)
	run := func(b *testing.B, c net.Conn, heads bool) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if heads {
				c.(*timedConn).awaiting.Store(false)
			}
			c.SetWriteDeadline(start.Add(time.Duration(i))) //nolint:errcheck // a failing write fails the benchmark
			if _, err := c.Write(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("set-when-waiting", func(b *testing.B) { run(b, newTimedConn(client, time.Minute, time.Minute), false) })
	b.Run("heads", func(b *testing.B) { run(b, newTimedConn(client, time.Minute, time.Minute), true) })
	b.Run("set-every-write", func(b *testing.B) { run(b, client, false) })
}
