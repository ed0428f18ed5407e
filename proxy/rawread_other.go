//go:build !unix

package proxy

import "net"

// useRawSocket leaves the connection without raw socket access: readNow
// then runs beforeWait before every read, which writes earlier than needed
// at worst.
func (c *timedConn) useRawSocket() {}

// clientGone cannot look at a socket here: a waiting request runs to its end.
func clientGone(net.Conn) bool { return false }
