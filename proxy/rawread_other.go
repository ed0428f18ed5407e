//go:build !unix

package proxy

// useRawSocket leaves the connection without raw socket access: readNow
// then runs beforeWait before every read, which writes earlier than needed
// at worst.
func (c *timedConn) useRawSocket() {}
