//go:build !unix

package proxy

import "net"

// useRawSocket leaves the connection without raw socket access: a read
// then runs beforeWait before it reads, which writes earlier than needed at
// worst.
func (c *timedConn) useRawSocket() {}

// clientGone cannot look at a socket here: a waiting request runs to its end.
func clientGone(net.Conn) bool { return false }
