package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// maxMemorySessions caps the sessions one run holds: each holds four
// sockets of this process through the gateway, and those held directly
// may not all be closed yet: under the file limit of 20,000 (make bench's
// -benchtime=1s asks for more).
const maxMemorySessions = 2000

// BenchmarkRealtimeSessionMemory measures what one open realtime session
// costs the gateway in memory: b.N sessions (at most maxMemorySessions)
// are held open at once, each having carried one message each way (an
// echoing upstream sends back what the client sent), first straight to
// the upstream and then through the gateway; the difference per session
// is the gateway's share: its client connection and upstream connection,
// the session's two pumps and their buffers, and the largest message seen
// each way, which a session keeps. gateway-B/session is live heap and
// stacks after a GC; gateway-stack-B/session the stacks' part;
// gateway-rss-B/session the process's RSS growth, the memory not yet
// reclaimed included; goroutines/session the gateway's goroutines. Run it
// with e.g. -benchtime=1000x.
func BenchmarkRealtimeSessionMemory(b *testing.B) {
	for _, m := range []struct {
		name string
		msg  []byte
	}{
		{"event-200B", audioEvent("input_audio_buffer.append", "audio", 200)},
		{"audio-8KiB", audioEvent("input_audio_buffer.append", "audio", 8<<10)},
	} {
		b.Run(m.name, func(b *testing.B) {
			n := min(b.N, maxMemorySessions)
			upURL, gwURL := startMemoryGateway(b)
			b.ReportAllocs()
			direct := measureSessions(b, n, "ws"+strings.TrimPrefix(upURL, "http")+"/v1/realtime?model=gpt-4o-realtime", m.msg)
			via := measureSessions(b, n, gwURL+"/v1/realtime?model=fast", m.msg)
			per := func(v int64) float64 { return float64(v) / float64(n) }
			b.ReportMetric(per(via.live-direct.live), "gateway-B/session")
			b.ReportMetric(per(via.stack-direct.stack), "gateway-stack-B/session")
			b.ReportMetric(per(via.rss-direct.rss), "gateway-rss-B/session")
			b.ReportMetric(per(int64(via.goroutines-direct.goroutines)), "goroutines/session")
			b.ReportMetric(per(direct.live), "client+upstream-B/session")
		})
	}
}

// startMemoryGateway starts an echoing realtime upstream and a gateway
// whose model fast is mapped to it; both end with the benchmark.
func startMemoryGateway(b *testing.B) (upURL, gwURL string) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			op, p, err := c.ReadMessage()
			if err != nil || c.WriteMessage(op, p) != nil {
				return
			}
		}
	}))
	b.Cleanup(up.Close)
	g, addr := serveBenchGateway(b, up.URL)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.Shutdown(ctx) //nolint:errcheck
	})
	return up.URL, "ws://" + addr
}

// sessionMemory is what the process held with a set of sessions open,
// less what it held before they were opened.
type sessionMemory struct {
	live, stack, rss int64
	goroutines       int
}

// measureSessions opens n sessions at url, sends msg on each and reads
// it back, and measures the memory they hold; it closes them after.
func measureSessions(b *testing.B, n int, url string, msg []byte) sessionMemory {
	debug.FreeOSMemory()
	before := memoryNow()
	conns := make([]*websocket.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	h := http.Header{"Authorization": {"Bearer sk-bench-0123456789abcdef"}}
	for range n {
		c, _, err := websocket.DefaultDialer.Dial(url, h)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		if _, got, err := c.ReadMessage(); err != nil || len(got) != len(msg) {
			b.Fatalf("echo: %d bytes, %v", len(got), err)
		}
	}
	after := memoryNow()
	return sessionMemory{after.live - before.live, after.stack - before.stack, after.rss - before.rss,
		after.goroutines - before.goroutines}
}

// memoryNow is the live heap and stacks after a GC, the stacks, the RSS
// and the goroutines of the process.
func memoryNow() sessionMemory {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return sessionMemory{live: int64(m.HeapInuse + m.StackInuse), stack: int64(m.StackInuse), rss: rss(),
		goroutines: runtime.NumGoroutine()}
}

// rss is the process's resident set in bytes (Linux), 0 where unknown.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
