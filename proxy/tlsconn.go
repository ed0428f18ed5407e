package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync/atomic"
	"time"
)

// tlsConn is an https channel's upstream connection: TLS over a
// timedConn. The gateway makes it in the channel's Dial rather than let
// fasthttp wrap the timedConn (fasthttp wraps no connection that has a
// Handshake method), so that the request's plaintext head passes here,
// where the request id is found and the watch set on the timedConn
// beneath, which sees only ciphertext. LocalAddr, deadlines and reads go
// through tls.Conn to the timedConn as they would through fasthttp's.
type tlsConn struct {
	*tls.Conn
	under *timedConn
}

// upstreamRoots are the certificate authorities an https channel made
// from then on trusts, nil for the system's; tests set their own.
var upstreamRoots atomic.Pointer[x509.CertPool]

// upstreamTLS is the TLS configuration of a connection to an upstream
// host: its certificate checked against the system's authorities (or the
// tests' upstreamRoots), TLS 1.2 at least.
func upstreamTLS(host string) *tls.Config {
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, RootCAs: upstreamRoots.Load()}
}

// handshake makes the TLS connection over under and completes its
// handshake by deadline, closing under when it fails. The handshake waits
// under deadline alone, as the dial before it: the first-byte and idle
// timeouts are the answer's.
func handshake(under *timedConn, cfg *tls.Config, deadline time.Time) (net.Conn, error) {
	under.secure = true
	c := &tlsConn{Conn: tls.Client(under, cfg), under: under}
	firstByte, idle := under.firstByte, under.idle
	under.firstByte, under.idle = untimed, untimed
	under.SetDeadline(deadline) //nolint:errcheck // fails only moving a waiting write's deadline: none waits
	err := c.Handshake()
	under.firstByte, under.idle = firstByte, idle
	if err != nil {
		under.Close() //nolint:errcheck // the handshake's error says more
		return nil, err
	}
	under.SetDeadline(time.Time{}) //nolint:errcheck // as above
	return c, nil
}

// Write and Read keep the timedConn's awaiting by the plaintext: the
// first-byte timeout lasts until the answer's first byte, as on http.
func (c *tlsConn) Write(p []byte) (int, error) {
	if err := c.under.startWrite(p); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *tlsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.under.got(n)
	return n, err
}
