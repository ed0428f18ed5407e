//go:build unix

package proxy

import (
	"io"
	"net"
	"os"
	"syscall"
)

// useRawSocket lets readOrWait ask the connection's socket, when it has
// one, whether a read would wait.
func (c *timedConn) useRawSocket() {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw, c.readFD, c.writeFD = raw, c.tryRead, c.tryWrite
		}
	}
}

// tryRead is readOrWait's read, run by RawConn.Read, which waits for the
// socket when it reports false. The first time the socket has nothing, it
// runs beforeWait and arms the deadline the wait is under.
func (c *timedConn) tryRead(fd uintptr) bool {
	n, err := syscall.Read(int(fd), c.p)
	for err == syscall.EINTR {
		n, err = syscall.Read(int(fd), c.p)
	}
	switch {
	case err == syscall.EAGAIN:
		if c.sent {
			return false // woken with nothing to read: wait again
		}
		c.sent = true
		if !c.beforeWait() {
			c.err = errClientGone
			return true
		}
		if c.err = c.arm(); c.err != nil {
			return true
		}
		return false
	case err != nil:
		c.err = c.opError("read", os.NewSyscallError("read", err))
	case n == 0 && len(c.p) > 0:
		c.err = io.EOF
	default:
		c.n = n
	}
	return true
}

// tryWrite is writeNow's write, run by RawConn.Write: what the socket
// takes of c.wp, in c.wn, never waiting (it always reports true). An
// error is worded as the connection's own Write words it.
func (c *timedConn) tryWrite(fd uintptr) bool {
	for c.wn < len(c.wp) {
		n, err := syscall.Write(int(fd), c.wp[c.wn:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return true // the rest waits under the deadline
		case err != nil:
			c.werr = c.opError("write", os.NewSyscallError("write", err))
			return true
		case n == 0:
			c.werr = c.opError("write", io.ErrUnexpectedEOF) // as poll.FD.Write reports a write of nothing
			return true
		}
		c.wn += n
	}
	return true
}

// clientGone reports whether the client closed its connection: its socket
// reads as ended (or failed) when peeked at without waiting. Bytes waiting
// to be read (a next request) mean it is there. A TLS client's close_notify
// is such bytes: only its FIN, after them, is noticed.
func clientGone(conn net.Conn) bool {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = tc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	raw.Control(func(fd uintptr) { //nolint:errcheck // a closed socket is gone
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = (err == nil && n == 0) || (err != nil && err != syscall.EAGAIN && err != syscall.EINTR)
	})
	return gone
}
