package proxy_test

import (
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A client that closes its connection while its whole (non-streamed)
// request waits for the upstream cancels the upstream request: the
// upstream sees its connection close within a second of the client's, the
// access line says 499, and no goroutine is left behind. Every client
// style, every channel type, over http and https (where the request id
// is found above TLS).
func TestClientGoneCancelsWaitingRequest(t *testing.T) {
	for _, sc := range schemes {
		for _, typ := range []string{"openai", "anthropic", "gemini"} {
			t.Run(sc.name+"/"+typ, func(t *testing.T) { clientGoneEveryClient(t, sc.start, typ) })
		}
	}
}

// schemes start a mock upstream serving http, or https.
var schemes = []struct {
	name  string
	start mockStart
}{{"http", newMock}, {"https", newTLSMock}}

// clientGoneEveryClient checks, for every client style, that a client
// gone while its whole answer is awaited from a channel of type typ
// cancels the upstream request, leaving no goroutine.
func clientGoneEveryClient(t *testing.T, start mockStart, typ string) {
	cancelled := make(chan time.Time, 1)
	up := start(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-r.Context().Done():
			cancelled <- time.Now()
		case <-time.After(10 * time.Second):
			jsonReply(200, wireWhole(t, typ))(w, r, body)
		}
	})
	tg := startGateway(t, faultChannels(typ, "slow", up.srv.URL))
	// The first request starts what outlives it: the server's pooled
	// workers, the upstream client's idle-connection cleaner.
	closeWhileWaiting(t, tg, up, mappingClients()[0], cancelled)
	before := runtime.NumGoroutine()
	for _, cl := range mappingClients() {
		if cl.mode != "non_stream" {
			continue
		}
		t.Run(cl.style+"_client/"+typ+"_channel", func(t *testing.T) {
			for range 2 {
				closeWhileWaiting(t, tg, up, cl, cancelled)
				waitFor(t, "the access line of status 499", func() bool {
					lines := tg.accessLines(t)
					return len(lines) > 0 && lines[len(lines)-1]["status"] == float64(499)
				})
			}
		})
	}
	// Six requests cancelled: a goroutine left by each would show; the
	// server may keep a worker or two more in its pool.
	waitFor(t, fmt.Sprintf("goroutines back to %d (+2)", before), func() bool { return runtime.NumGoroutine() <= before+2 })
}

// closeWhileWaiting sends cl's request for the model "slow" on a
// connection of its own, closes the connection once the upstream has the
// request, and checks that the upstream's request is cancelled within a
// second.
func closeWhileWaiting(t *testing.T, tg *testGateway, up *mockUpstream, cl mappingClient, cancelled <-chan time.Time) {
	t.Helper()
	hits := up.hits.Load()
	conn := sendAlone(t, tg, cl.path("slow"), cl.header, cl.body("slow"))
	waitFor(t, "the request to reach the upstream", func() bool { return up.hits.Load() > hits })
	closed := time.Now()
	conn.Close()
	select {
	case at := <-cancelled:
		if d := at.Sub(closed); d > time.Second {
			t.Errorf("the upstream saw the close after %v, want within 1s", d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
}

// sendAlone sends a JSON request on a connection of its own, left open
// for the caller to close.
func sendAlone(t *testing.T, tg *testGateway, path string, header map[string]string, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, len(body))
	for k, v := range header {
		req += k + ": " + v + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n" + body)); err != nil {
		t.Fatal(err)
	}
	return conn
}
