package proxy_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkOpenStreamMemory measures what one open stream costs the gateway
// in memory: b.N streams are held open at once, first straight to the mock
// upstream and then through the gateway; the difference per stream is the
// gateway's share (server connection, worker goroutine, upstream connection,
// relay buffers), heap and goroutine stacks; gateway-stack-B/stream is the
// stacks' part. Live memory only (the live objects' bytes, HeapAlloc after
// two collections, and the stacks): the process's RSS also holds what the
// garbage collector has not yet reclaimed or returned, and the spans' free
// room (bench -hold measures that). Run it with e.g. -benchtime=2000x.
func BenchmarkOpenStreamMemory(b *testing.B) {
	b.ReportAllocs()
	c := openStreamCost(b, b.N, b.StopTimer)
	b.ReportMetric(c.gateway, "gateway-B/stream")
	b.ReportMetric(c.direct, "client+mock-B/stream")
	b.ReportMetric(c.gatewayStack, "gateway-stack-B/stream")
}

// settle waits, 2 s at most, until the goroutine count holds still for
// 100 ms: connections closed before (by an earlier test, or run) are gone,
// so that their memory is not counted against what is measured next.
func settle() {
	last := runtime.NumGoroutine()
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n == last {
			return
		}
		last = n
	}
}

// streamCost is the live memory per open stream: the gateway's share, its
// goroutine stacks' part, and the client's and mock's.
type streamCost struct{ gateway, gatewayStack, direct float64 }

// openStreamCost holds n streams open straight to a mock upstream, then n
// through the gateway, and reads the live memory each set adds; stop runs
// once the gateway's are measured.
func openStreamCost(tb testing.TB, n int, stop func()) streamCost {
	evs := events(fixture(tb, "chat_stream.sse"))
	release := make(chan struct{})
	up := newMock(tb, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		setOpenAIHeaders(w, r)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(evs[0])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	tg := startGateway(tb, channel("oa", up.baseURL(), ""))
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`
	open := func(base, auth string) []net.Conn {
		conns := make([]net.Conn, 0, n)
		addr := strings.TrimPrefix(base, "http://")
		for range n {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", auth, len(body), body)
			r := bufio.NewReaderSize(c, 512)
			for { // up to the first event
				line, err := r.ReadString('\n')
				if err != nil {
					tb.Fatal(err)
				}
				if strings.Contains(line, "data:") {
					break
				}
			}
			conns = append(conns, c)
		}
		return conns
	}
	var stack int64
	inUse := func() int64 {
		settle()
		runtime.GC() // twice: pooled objects outlive one collection
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		stack = int64(m.StackInuse)
		// HeapAlloc, not HeapInuse: objects freed earlier leave room in
		// spans still in use, which new ones fill without a span more.
		return int64(m.HeapAlloc + m.StackInuse)
	}
	closeAll := func(conns []net.Conn) {
		for _, c := range conns {
			c.Close()
		}
	}
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
	stop()
	closeAll(via)
	return streamCost{gateway: float64(gatewayCost-directCost) / float64(n), direct: float64(directCost) / float64(n),
		gatewayStack: float64(gatewayStack-directStack) / float64(n)}
}
