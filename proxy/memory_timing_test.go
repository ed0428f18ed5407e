package proxy_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkOpenStreamMemory measures what one open stream costs the gateway
// in memory: b.N streams are held open at once, first straight to the mock
// upstream and then through the gateway; the difference per stream is the
// gateway's share (server connection, worker goroutine, upstream connection,
// relay buffers), heap and goroutine stacks; gateway-stack-B/stream is the
// stacks' part. Live memory only: the process's RSS also holds what the
// garbage collector has not yet reclaimed or returned (bench -hold measures
// that). Run it with e.g. -benchtime=2000x.
func BenchmarkOpenStreamMemory(b *testing.B) {
	evs := events(fixture(b, "chat_stream.sse"))
	release := make(chan struct{})
	up := newMock(b, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(evs[0])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	tg := startGateway(b, channel("oa", up.baseURL(), ""))
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`
	open := func(base, auth string) []net.Conn {
		conns := make([]net.Conn, 0, b.N)
		addr := strings.TrimPrefix(base, "http://")
		for range b.N {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", auth, len(body), body)
			r := bufio.NewReaderSize(c, 512)
			for { // up to the first event
				line, err := r.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				if strings.HasPrefix(line, "data:") || strings.Contains(line, "data:") {
					break
				}
			}
			conns = append(conns, c)
		}
		return conns
	}
	var stack int64
	inUse := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		stack = int64(m.StackInuse)
		return int64(m.HeapInuse + m.StackInuse)
	}
	closeAll := func(conns []net.Conn) {
		for _, c := range conns {
			c.Close()
		}
	}
	b.ReportAllocs()
	base := inUse()
	baseStack := stack
	direct := open(strings.TrimSuffix(up.baseURL(), "/v1"), "x")
	directCost := inUse() - base
	directStack := stack - baseStack
	closeAll(direct)

	base = inUse()
	baseStack = stack
	via := open(tg.url, clientKey)
	gatewayCost := inUse() - base
	gatewayStack := stack - baseStack
	b.StopTimer()
	closeAll(via)
	close(release)
	b.ReportMetric(float64(gatewayCost-directCost)/float64(b.N), "gateway-B/stream")
	b.ReportMetric(float64(directCost)/float64(b.N), "client+mock-B/stream")
	b.ReportMetric(float64(gatewayStack-directStack)/float64(b.N), "gateway-stack-B/stream")
}
