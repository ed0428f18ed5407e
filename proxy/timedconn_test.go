package proxy

import (
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp/fasthttputil"
)

// deadlineConn records the read deadlines set on it.
type deadlineConn struct {
	net.Conn
	set      int
	deadline time.Time
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.set++
	c.deadline = t
	return nil
}

func (c *deadlineConn) Read(p []byte) (int, error)  { return len(p), nil }
func (c *deadlineConn) Write(p []byte) (int, error) { return len(p), nil }

// TestTimedConnRearms checks that every read runs under a deadline at
// least the timeout and at most a sixteenth more away, and that the
// deadline is not set again on every read.
func TestTimedConnRearms(t *testing.T) {
	under := &deadlineConn{}
	c := &timedConn{Conn: under, firstByte: time.Second, idle: 800 * time.Millisecond}
	c.awaiting.Store(true)
	check := func(d time.Duration, outer time.Time) {
		t.Helper()
		before := time.Now()
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		lo, hi := before.Add(d), after.Add(d+d/16)
		if !outer.IsZero() {
			if outer.Before(lo) {
				lo = outer
			}
			if outer.Before(hi) {
				hi = outer
			}
		}
		if under.deadline.Before(lo) || under.deadline.After(hi) {
			t.Fatalf("deadline %v outside [%v, %v]", under.deadline, lo, hi)
		}
	}
	check(time.Second, time.Time{}) // awaiting the first byte
	if under.set != 1 {
		t.Fatalf("%d deadlines set", under.set)
	}
	start := time.Now()
	reads := 0
	for time.Since(start) < 200*time.Millisecond {
		check(800*time.Millisecond, time.Time{})
		reads++
		time.Sleep(time.Millisecond)
	}
	// 200 ms at one re-arm per 50 ms (800 ms / 16), plus the switch from
	// the first-byte timeout to the idle one.
	if under.set > 8 || reads < 20 {
		t.Errorf("%d deadlines set over %d reads", under.set, reads)
	}
	// The client's total deadline, when sooner, is kept exactly.
	outer := time.Now().Add(100 * time.Millisecond)
	c.SetReadDeadline(outer)
	check(800*time.Millisecond, outer)
	if !under.deadline.Equal(outer) {
		t.Errorf("deadline %v, want the client's %v", under.deadline, outer)
	}
	set := under.set
	check(800*time.Millisecond, outer)
	if under.set != set {
		t.Error("the client's deadline was set again")
	}
	c.SetReadDeadline(time.Time{})
	check(800*time.Millisecond, time.Time{})
	// A new request awaits its first byte again.
	c.Write(nil)
	check(time.Second, time.Time{})
}

// noReadConn is a real TCP connection whose reads return at once, so
// that what a benchmark measures is the deadline, not the read.
type noReadConn struct{ net.Conn }

func (noReadConn) Read(p []byte) (int, error) { return len(p), nil }

// BenchmarkTimedConnRead is the deadline work of one upstream read on a
// loopback TCP connection (the read itself left out): timedConn, and
// setting the deadline on every read as timedConn did before.
func BenchmarkTimedConnRead(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1)) // until the client closes
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	p := make([]byte, 512)
	b.Run("rearm-out-of-window", func(b *testing.B) {
		c := &timedConn{Conn: noReadConn{conn}, firstByte: time.Minute, idle: time.Minute}
		b.ReportAllocs()
		for b.Loop() {
			c.Read(p)
		}
	})
	b.Run("rearm-every-read", func(b *testing.B) {
		c := noReadConn{conn}
		b.ReportAllocs()
		for b.Loop() {
			if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
				b.Fatal(err)
			}
			c.Read(p)
		}
	})
}

// A read woken by the client watcher after its request ended (the wake
// meant for the request the connection served before) reads on: only its
// own deadline, or its own client's leaving, ends it, whatever kind of
// timeout error its connection gives (fasthttputil's in-memory one, the
// demo channel's, is not a net.Error).
func TestWokenReadReadsOn(t *testing.T) {
	pc := fasthttputil.NewPipeConns()
	c := newTimedConn(pc.Conn1(), 5*time.Second, 5*time.Second)
	c.watch = &watch{} // a client still there
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.Conn.SetReadDeadline(time.Unix(1, 0)) //nolint:errcheck // as wake does
		time.Sleep(100 * time.Millisecond)
		pc.Conn2().Write([]byte("late answer")) //nolint:errcheck
	}()
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "late answer" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
}

// The watcher ends the upstream read of a request whose client closed its
// connection within two polls, and stops once no request waits.
func TestWatcherEndsReadOfGoneClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept() // the gateway's side of the client's connection
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	pc := fasthttputil.NewPipeConns()
	c := newTimedConn(pc.Conn1(), 5*time.Second, 5*time.Second)
	id := []byte("req_watcher_test")
	w := &watch{client: server, since: time.Now()}
	startWaiting(id, w)
	if _, err := c.Write([]byte("POST /v1/x HTTP/1.1\r\nX-Request-Id: req_watcher_test\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if c.watch != w || w.up != c {
		t.Fatal("the upstream connection did not find the waiting exchange by its request id")
	}
	go func() { time.Sleep(100 * time.Millisecond); client.Close() }()
	start := time.Now()
	n, err := c.Read(make([]byte, 16))
	stopWaiting(id)
	if n != 0 || err != errClientGone || !w.left.Load() {
		t.Fatalf("read %d, %v, left %v; want errClientGone", n, err, w.left.Load())
	}
	if d := time.Since(start); d > 3*pollClient {
		t.Errorf("the read ended %v after the client left, want within %v", d, 3*pollClient)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		waiting.Lock()
		running := waiting.watching
		waiting.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher still runs with no request waiting")
		}
		time.Sleep(pollClient / 5)
	}
}
