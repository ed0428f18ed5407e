package proxy_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// The first-byte timeout bounds the wait for the first byte of the
// answer's head and the idle timeout every wait after it, on https
// channels exactly as on http ones: TLS bytes that carry no byte of the
// answer yet (a record's header come before the rest of the record) begin
// nothing. Each case's outcome tells which timeout applied, with no wall
// time measured.
func TestTimeoutsOverTLSRecords(t *testing.T) {
	f := func(secure bool, timeouts string, firstWait, bodyWait time.Duration, status int) {
		t.Helper()
		up := scriptedUpstream{secure: secure, pieces: answerPieces(t, firstWait, bodyWait)}
		t.Run(fmt.Sprintf("secure=%v %s %d", secure, timeouts, status), func(t *testing.T) { up.check(t, timeouts, status) })
	}
	for _, secure := range []bool{false, true} {
		// The head begins 600 ms after the request: within the first-byte
		// timeout and past the idle one, it is served; past the first-byte
		// timeout and within the idle one, it times out.
		f(secure, "{first_byte: 2s, idle: 300ms}", 600*time.Millisecond, 0, 200)
		f(secure, "{first_byte: 300ms, idle: 5s}", 600*time.Millisecond, 0, 504)
		// The body stalls for 1 s: past the idle timeout, within the
		// first-byte one.
		f(secure, "{first_byte: 5s, idle: 300ms}", 0, time.Second, 504)
		f(secure, "{first_byte: 300ms, idle: 5s}", 0, time.Second, 200)
	}
}

// An https upstream's handshake is bounded by the connect timeout alone,
// as a dial is: answered 600 ms late, within it, the request is served
// however short the first-byte and idle timeouts; past it, it times out.
func TestTLSHandshakeUnderConnectTimeout(t *testing.T) {
	up := scriptedUpstream{secure: true, handshakeWait: 600 * time.Millisecond, pieces: answerPieces(t, 0, 0)}
	up.check(t, "{connect: 5s, first_byte: 300ms, idle: 300ms}", 200)
	up.check(t, "{connect: 300ms, first_byte: 5s, idle: 5s}", 504)
}

// A request whose total timeout a slow handshake used up is not sent: the
// upstream, which finishes its handshake within the connect timeout but
// past the total one, receives no request, and the client gets a 504.
func TestTotalUsedUpBeforeRequest(t *testing.T) {
	requests := make(chan bool, 8)
	up := scriptedUpstream{secure: true, handshakeWait: 600 * time.Millisecond, pieces: answerPieces(t, 0, 0), requests: requests}
	up.check(t, "{connect: 5s, first_byte: 5s, idle: 5s, total: 300ms}", 504)
	select {
	case got := <-requests:
		if got {
			t.Error("the upstream received the request after its total timeout had passed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the gateway's connection to the upstream still open 5s after its 504")
	}
}

// answerPieces is chat_response.json's answer: its head a line a piece
// (the first after firstWait, the others 100 ms apart), then its body in
// two halves, the second after bodyWait.
func answerPieces(t *testing.T, firstWait, bodyWait time.Duration) []piece {
	whole := fixture(t, "chat_response.json")
	head := []string{"HTTP/1.1 200 OK\r\n", "Content-Type: application/json\r\n",
		fmt.Sprintf("Content-Length: %d\r\n", len(whole)), "Connection: close\r\n\r\n"}
	ps := []piece{{firstWait, head[0]}}
	for _, line := range head[1:] {
		ps = append(ps, piece{100 * time.Millisecond, line})
	}
	half := len(whole) / 2
	return append(ps, piece{0, string(whole[:half])}, piece{bodyWait, string(whole[half:])})
}

// check posts a request through a gateway whose channel, with timeouts,
// is the upstream u starts, and checks the answer is a 504 or, for status
// 200, the upstream's.
func (u scriptedUpstream) check(t *testing.T, timeouts string, status int) {
	tg := startGateway(t, channel("oa", u.start(t), "timeouts: "+timeouts))
	resp, body := tg.post(t, miniBody)
	if status == 504 {
		checkError(t, resp, body, 504, "upstream_timeout")
		return
	}
	if resp.StatusCode != status || !strings.Contains(string(body), "How can I assist you today?") {
		t.Fatalf("%s: status %d, want %d with the answer; body %s", timeouts, resp.StatusCode, status, body)
	}
}

// piece is a part of a raw HTTP answer, and how long after the last its
// first byte can be read.
type piece struct {
	wait time.Duration
	text string
}

// scriptedUpstream answers each request on loopback with pieces, over
// http, or https when secure: each piece then is a TLS record of its own,
// whose header (its first five bytes) is sent at once and the rest after
// the piece's wait, so that TLS bytes come before the answer's bytes they
// carry; and its handshake answers handshakeWait late.
type scriptedUpstream struct {
	secure        bool
	handshakeWait time.Duration
	pieces        []piece
	requests      chan<- bool // when set, told of each connection whether it brought a request
}

// start starts the upstream until t ends and returns its base URL.
func (u scriptedUpstream) start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var cfg *tls.Config
	scheme := "http"
	if u.secure {
		cfg, scheme = proxy.TrustedServerTLS(t), "https"
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); u.answer(conn, cfg) }()
		}
	}()
	return scheme + "://" + ln.Addr().String() + "/v1"
}

// answer reads one request from conn and answers it.
func (u scriptedUpstream) answer(conn net.Conn, cfg *tls.Config) {
	defer conn.Close()
	var d *delayedRecords
	c := conn
	if cfg != nil {
		time.Sleep(u.handshakeWait)
		d = &delayedRecords{Conn: conn}
		c = tls.Server(d, cfg)
	}
	req, err := http.ReadRequest(bufio.NewReader(c))
	select {
	case u.requests <- err == nil: // none when nil
	default: // full: the test has its answer
	}
	if err != nil {
		return
	}
	io.Copy(io.Discard, req.Body) //nolint:errcheck // the answer follows anyway
	for _, p := range u.pieces {
		if d != nil {
			d.wait = p.wait
		} else {
			time.Sleep(p.wait)
		}
		if _, err := c.Write([]byte(p.text)); err != nil {
			return
		}
	}
}

// delayedRecords sends each TLS record written to it (a Write of more
// than a record's header) in two parts, the second after wait.
type delayedRecords struct {
	net.Conn
	wait time.Duration
}

func (c *delayedRecords) Write(p []byte) (int, error) {
	if c.wait == 0 || len(p) <= 5 {
		return c.Conn.Write(p)
	}
	n, err := c.Conn.Write(p[:5])
	if err != nil {
		return n, err
	}
	time.Sleep(c.wait)
	m, err := c.Conn.Write(p[5:])
	return n + m, err
}
