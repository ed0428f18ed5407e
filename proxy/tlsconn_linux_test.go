package proxy

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// An https channel's handshake waits under the dial's deadline (the
// connect timeout's) alone, whatever the first-byte and idle timeouts:
// every read deadline set on the socket is that deadline exactly, and a
// handshake never answered fails with a timeout, not before it.
func TestHandshakeUnderDialDeadline(t *testing.T) {
	client, _ := tcpPair(t) // its peer never answers
	under := &socketDeadlines{TCPConn: client.(*net.TCPConn)}
	c := newTimedConn(under, time.Millisecond, time.Millisecond)
	deadline := time.Now().Add(200 * time.Millisecond)
	_, err := handshake(c, upstreamTLS("127.0.0.1"), deadline)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the handshake ended with %v, want a timeout", err)
	}
	if time.Now().Before(deadline) {
		t.Error("the handshake timed out before its deadline")
	}
	if len(under.reads) == 0 {
		t.Fatal("the handshake read under no deadline")
	}
	for _, d := range under.reads {
		if !d.Equal(deadline) {
			t.Fatalf("read deadlines %v, want the dial's %v alone", under.reads, deadline)
		}
	}
}
