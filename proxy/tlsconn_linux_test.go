package proxy

import (
	"crypto/tls"
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

// On an https channel too, a write waiting (its peer reads nothing) is
// ended by a later write deadline in the past: tls.Conn passes it to the
// timedConn beneath, which moves the waiting write's.
func TestTLSPendingWriteObeysNewDeadline(t *testing.T) {
	cfg := TrustedServerTLS(t)
	client, server := tcpPair(t)
	go tls.Server(server, cfg).Handshake() //nolint:errcheck // then it reads nothing
	conn, err := handshake(newTimedConn(client, time.Minute, time.Minute), upstreamTLS("127.0.0.1"), time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	done := blockedWrite(t, conn)
	set := time.Now()
	conn.SetWriteDeadline(set.Add(-time.Second)) //nolint:errcheck // never fails
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the write ended with %v, want a timeout", err)
		}
		if d := time.Since(set); d > 250*time.Millisecond {
			t.Errorf("the write ended %v after its deadline was moved to the past", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write still waits 5s after its deadline was moved to the past")
	}
}
