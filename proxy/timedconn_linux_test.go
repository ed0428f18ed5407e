package proxy

import (
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestTimedConnBeforeWait: beforeWait runs only when a read would wait,
// and the time it takes (a slow client's write) does not count against the
// upstream's idle timeout.
func TestTimedConnBeforeWait(t *testing.T) {
	client, server := tcpPair(t)
	c := newTimedConn(client, time.Second, 100*time.Millisecond)
	if c.raw == nil {
		t.Fatal("a TCP connection has no raw socket access")
	}
	var waits int
	c.beforeWait = func() bool {
		waits++
		// Longer than the idle timeout; the upstream sends meanwhile.
		go func() { time.Sleep(50 * time.Millisecond); server.Write([]byte("late")) }()
		time.Sleep(300 * time.Millisecond)
		return true
	}
	server.Write([]byte("ready"))
	for deadline := time.Now().Add(5 * time.Second); pending(t, c) < len("ready"); {
		if time.Now().After(deadline) {
			t.Fatal("the bytes did not reach the socket")
		}
		time.Sleep(time.Millisecond)
	}
	buf := make([]byte, 16)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "ready" || waits != 0 {
		t.Fatalf("read %q, %v after %d waits; want the bytes at hand, no wait", buf[:n], err, waits)
	}
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "late" || waits != 1 {
		t.Fatalf("read %q, %v after %d waits; want the late bytes after one wait", buf[:n], err, waits)
	}
	c.beforeWait = func() bool { return false } // the client is gone
	if _, err := c.Read(buf); err != errClientGone {
		t.Fatalf("read with the client gone: %v, want errClientGone", err)
	}
	c.beforeWait = func() bool { return true }
	server.Close()
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("read after close: %v, want io.EOF", err)
	}
}

// pending is the number of bytes waiting in c's socket.
func pending(t *testing.T, c *timedConn) int {
	var n int
	var err error
	c.raw.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	if err != nil {
		t.Fatal(err)
	}
	return n
}
