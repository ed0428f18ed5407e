package proxy

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// socketDeadlines records the deadlines set on a TCP connection; its
// socket stays reachable (SyscallConn), as a dialed upstream's is.
type socketDeadlines struct {
	*net.TCPConn
	writes    int
	lastWrite time.Time
	reads     []time.Time
}

func (c *socketDeadlines) SetWriteDeadline(t time.Time) error {
	c.writes++
	c.lastWrite = t
	return c.TCPConn.SetWriteDeadline(t)
}

func (c *socketDeadlines) SetReadDeadline(t time.Time) error {
	c.reads = append(c.reads, t)
	return c.TCPConn.SetReadDeadline(t)
}

// A write the socket takes at once sets no write deadline, whatever the
// client asked for: the request of each exchange is written, none set.
func TestTimedConnWriteSetsNoDeadline(t *testing.T) {
	client, server := tcpPair(t)
	under := &socketDeadlines{TCPConn: client.(*net.TCPConn)}
	c := newTimedConn(under, time.Minute, time.Minute)
	go io.Copy(io.Discard, server) //nolint:errcheck // until the test closes it
	p := make([]byte, 3000)
	for i := range 50 {
		c.SetWriteDeadline(time.Now().Add(10*time.Minute + time.Duration(i))) //nolint:errcheck // never fails
		if n, err := c.Write(p); n != len(p) || err != nil {
			t.Fatalf("wrote %d, %v", n, err)
		}
	}
	if under.writes != 0 {
		t.Errorf("%d write deadlines set, want none", under.writes)
	}
}

// headWritten writes a request's head on c under a far write deadline, so
// that the test's next write is the request's body: a body's write is not
// failed up front by a deadline that passed while the test stalled (a head's
// is, by design), which under a loaded CI made these tests' writes write
// nothing.
func headWritten(t *testing.T, c net.Conn) int {
	t.Helper()
	head := []byte("POST / HTTP/1.1\r\nContent-Length: 67108864\r\n\r\n")
	c.SetWriteDeadline(time.Now().Add(time.Minute)) //nolint:errcheck // never fails
	if n, err := c.Write(head); n != len(head) || err != nil {
		t.Fatalf("wrote %d of the head, %v", n, err)
	}
	return len(head)
}

// A write that has to wait does so under the client's deadline, exactly,
// and fails with a timeout when the peer reads nothing until then; the
// next write, which the socket takes at once, runs under no deadline.
func TestTimedConnWriteWaitsUnderDeadline(t *testing.T) {
	client, server := tcpPair(t)
	under := &socketDeadlines{TCPConn: client.(*net.TCPConn)}
	c := newTimedConn(under, time.Minute, time.Minute)
	head := headWritten(t, c)
	deadline := time.Now().Add(200 * time.Millisecond)
	c.SetWriteDeadline(deadline) //nolint:errcheck // never fails
	big := make([]byte, 64<<20)  // more than both sockets' buffers
	n, err := c.Write(big)
	if !errors.Is(err, os.ErrDeadlineExceeded) || n == 0 || n == len(big) {
		t.Fatalf("wrote %d of %d, %v; want part of it and a timeout", n, len(big), err)
	}
	if time.Now().Before(deadline) {
		t.Error("the write failed before its deadline")
	}
	if under.writes != 1 || !under.lastWrite.Equal(deadline) {
		t.Fatalf("%d write deadlines set, the last %v; want the client's %v", under.writes, under.lastWrite, deadline)
	}
	// The peer reads what the failed write left in the sockets before the
	// next writes, so that none of them has to wait however slowly the
	// reader runs (under load it lagged, and one waited).
	if _, err := io.CopyN(io.Discard, server, int64(head+n)); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, server)                  //nolint:errcheck // until the test closes it
	c.SetWriteDeadline(time.Now().Add(time.Minute)) //nolint:errcheck // never fails
	p := make([]byte, 3000)
	for range 10 {
		if n, err := c.Write(p); n != len(p) || err != nil {
			t.Fatalf("wrote %d, %v", n, err)
		}
	}
	if under.writes != 2 || !under.lastWrite.IsZero() {
		t.Errorf("%d write deadlines set, the last %v; want the first write's cleared", under.writes, under.lastWrite)
	}
}

// A request whose write deadline has passed (a slow dial and handshake
// used it up) fails at its first write, the head, with a timeout, and
// nothing of it reaches the peer: over http and https.
func TestTimedConnWritePastDeadline(t *testing.T) {
	for _, secure := range []bool{false, true} {
		conn, received := peerCounting(t, secure)
		conn.SetWriteDeadline(time.Now().Add(-time.Millisecond)) //nolint:errcheck // no write waits
		n, err := conn.Write([]byte("POST / HTTP/1.1\r\n\r\n"))
		var ne net.Error
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("secure=%v: wrote %d, %v; want nothing and a timeout", secure, n, err)
		}
		conn.Close()
		if got := <-received; got != 0 {
			t.Errorf("secure=%v: the peer received %d bytes of the request, want 0", secure, got)
		}
	}
}

// peerCounting returns an upstream connection, a timedConn or with secure
// a tlsConn whose handshake is done, and the number of (plaintext) bytes
// its peer will have received once it is closed.
func peerCounting(t *testing.T, secure bool) (net.Conn, <-chan int64) {
	client, server := tcpPair(t)
	var conn net.Conn = newTimedConn(client, time.Minute, time.Minute)
	peer := server
	if secure {
		peer = tls.Server(server, TrustedServerTLS(t))
	}
	received := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, peer) //nolint:errcheck // the count is all
		received <- n
	}()
	if secure {
		var err error
		if conn, err = handshake(conn.(*timedConn), upstreamTLS("127.0.0.1"), time.Now().Add(5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	return conn, received
}

// Past its head, a request's write is held to its deadline only when it
// has to wait: a write the socket takes whole is written, one that waits
// fails at once, having written what the socket took. The clock is read
// once a request, not at every write.
func TestTimedConnBodyPastDeadline(t *testing.T) {
	client, _ := tcpPair(t)
	c := newTimedConn(client, time.Minute, time.Minute)
	c.SetWriteDeadline(time.Now().Add(time.Minute)) //nolint:errcheck // no write waits
	head := []byte("POST / HTTP/1.1\r\n\r\n")
	if n, err := c.Write(head); n != len(head) || err != nil {
		t.Fatalf("wrote %d of the head, %v", n, err)
	}
	c.SetWriteDeadline(time.Now().Add(-time.Millisecond)) //nolint:errcheck // no write waits
	if n, err := c.Write(head); n != len(head) || err != nil {
		t.Fatalf("wrote %d, %v; want the socket to take it all", n, err)
	}
	start := time.Now()
	big := make([]byte, 64<<20)
	n, err := c.Write(big)
	if !errors.Is(err, os.ErrDeadlineExceeded) || n == 0 || n == len(big) {
		t.Fatalf("wrote %d of %d, %v; want part of it and a timeout", n, len(big), err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the write failed %v after it began, want at once", d)
	}
}

// A write to a connection its peer has reset fails as the connection's
// own Write fails on such a connection: the same *net.OpError, with the
// same words.
func TestTimedConnWriteErrorWorded(t *testing.T) {
	reset := func() net.Conn {
		client, server := tcpPair(t)
		server.(*net.TCPConn).SetLinger(0) //nolint:errcheck // a reset, not a FIN
		server.Close()
		return client
	}
	client, plain := reset(), reset()
	c := newTimedConn(client, time.Minute, time.Minute)
	time.Sleep(50 * time.Millisecond) // the resets arrive
	_, err := c.Write([]byte("x"))
	_, want := plain.Write([]byte("x"))
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "write" || op.Addr.String() != client.RemoteAddr().String() ||
		op.Source.String() != client.LocalAddr().String() {
		t.Fatalf("error %#v, want the connection's *net.OpError", err)
	}
	words := func(err error, c net.Conn) string {
		return strings.ReplaceAll(strings.ReplaceAll(err.Error(), c.LocalAddr().String(), "L"), c.RemoteAddr().String(), "R")
	}
	if words(err, client) != words(want, plain) {
		t.Errorf("error %q, the connection's own Write says %q", err, want)
	}
}

// blockedWrite starts a write on c (a timedConn or tlsConn) of more than
// the sockets hold, the peer reading nothing, and returns its result once
// it ends; it returns when the write waits under the write deadline.
func blockedWrite(t *testing.T, c net.Conn) <-chan error {
	t.Helper()
	under, ok := c.(*timedConn)
	if tc, secure := c.(*tlsConn); secure {
		under, ok = tc.under, true
	}
	if !ok {
		t.Fatalf("%T is no upstream connection", c)
	}
	done := make(chan error, 1)
	big := make([]byte, 64<<20) // made before the clock starts: under -race on a loaded machine it took seconds
	go func() {
		_, err := c.Write(big)
		done <- err
	}()
	for give := time.Now().Add(30 * time.Second); !under.waitingW.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(give) {
			t.Fatal("the write does not wait 30s after it began")
		}
	}
	return done
}

// A write waiting under an older deadline, or none, is ended by a later
// SetWriteDeadline in the past, at once, with a timeout: a deadline applies
// to pending I/O too (net.Conn).
func TestTimedConnPendingWriteObeysNewDeadline(t *testing.T) {
	f := func(old time.Time) {
		t.Helper()
		client, _ := tcpPair(t)
		c := newTimedConn(client, time.Minute, time.Minute)
		c.SetWriteDeadline(old) //nolint:errcheck // never fails
		done := blockedWrite(t, c)
		set := time.Now()
		c.SetWriteDeadline(set.Add(-time.Second)) //nolint:errcheck // never fails
		select {
		case err := <-done:
			var ne net.Error
			if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("the write ended with %v, want a timeout", err)
			}
			if d := time.Since(set); d > 250*time.Millisecond {
				t.Errorf("the write ended %v after its deadline was moved to the past", d)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the write still waits 5s after its deadline was moved to the past (old deadline %v)", old)
		}
	}
	f(time.Time{})
	f(time.Now().Add(time.Minute))
}

// A write waiting under a deadline that is then cleared waits on past it,
// and completes once the peer reads. The near deadline is set once the
// write waits (under a far one): set before, it could pass while a loaded
// machine was still getting the write to wait, and end it at once.
func TestTimedConnPendingWriteDeadlineCleared(t *testing.T) {
	client, server := tcpPair(t)
	c := newTimedConn(client, time.Minute, time.Minute)
	headWritten(t, c)
	done := blockedWrite(t, c)
	old := time.Now().Add(300 * time.Millisecond)
	c.SetWriteDeadline(old)         //nolint:errcheck // never fails
	c.SetWriteDeadline(time.Time{}) //nolint:errcheck // never fails
	select {
	case err := <-done:
		t.Fatalf("the write ended with %v under a cleared deadline", err)
	case <-time.After(time.Until(old) + 300*time.Millisecond):
	}
	go io.Copy(io.Discard, server) //nolint:errcheck // until the test closes it
	if err := <-done; err != nil {
		t.Fatalf("the write failed once the peer read: %v", err)
	}
}

// errSocketDeadline is the failure of refusingDeadlines' SetWriteDeadline.
var errSocketDeadline = errors.New("the socket's write deadline cannot be set")

// refusingDeadlines is a TCP connection whose SetWriteDeadline fails once
// refuse is set, as a closed connection's does.
type refusingDeadlines struct {
	*net.TCPConn
	refuse atomic.Bool
}

func (c *refusingDeadlines) SetWriteDeadline(t time.Time) error {
	if c.refuse.Load() {
		return errSocketDeadline
	}
	return c.TCPConn.SetWriteDeadline(t)
}

// SetDeadline fails when the deadline of a waiting write cannot be moved.
func TestTimedConnSetDeadlineFails(t *testing.T) {
	client, _ := tcpPair(t)
	under := &refusingDeadlines{TCPConn: client.(*net.TCPConn)}
	c := newTimedConn(under, time.Minute, time.Minute)
	blockedWrite(t, c) // ended when the test closes the connection
	under.refuse.Store(true)
	if err := c.SetDeadline(time.Now().Add(time.Minute)); !errors.Is(err, errSocketDeadline) {
		t.Errorf("SetDeadline returned %v, want the socket's error", err)
	}
}

// A request written in more than one write, none of which waits (a body
// past fasthttp's write buffer, an upload read from its spool), still gets
// its whole first-byte timeout counted from its last byte: the head's
// clock serves the first read only when the head was the whole request.
func TestFirstByteTimeoutAfterLastWrite(t *testing.T) {
	for _, secure := range []bool{false, true} {
		client, server := tcpPair(t)
		under := &socketDeadlines{TCPConn: client.(*net.TCPConn)}
		c := newTimedConn(under, time.Minute, time.Minute)
		var conn net.Conn = c
		peer := server
		if secure {
			peer = tls.Server(server, TrustedServerTLS(t))
		}
		head, body := []byte("POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n"), []byte("body")
		go func() { // reads the request, then hangs up, ending the read
			io.ReadFull(peer, make([]byte, len(head)+len(body))) //nolint:errcheck // the close is what counts
			peer.Close()
		}()
		if secure {
			var err error
			if conn, err = handshake(c, upstreamTLS("127.0.0.1"), time.Now().Add(5*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		conn.SetWriteDeadline(time.Now().Add(time.Minute)) //nolint:errcheck // no write waits
		if _, err := conn.Write(head); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond) // the body's writing takes a while
		if _, err := conn.Write(body); err != nil {
			t.Fatal(err)
		}
		last := time.Now()
		set := len(under.reads)
		conn.Read(make([]byte, 1)) //nolint:errcheck // the deadline is what counts
		if len(under.reads) == set {
			t.Fatalf("secure=%v: the first read set no deadline", secure)
		}
		want := last.Add(time.Minute + time.Minute/16)
		if got := under.reads[set]; got.Before(want) {
			t.Errorf("secure=%v: first-byte deadline %v before the body's end, %v early", secure, got, want.Sub(got))
		}
	}
}
