//go:build unix

package proxy

import (
	"io"
	"net"
	"os"
	"syscall"
)

// useRawSocket lets readNow ask the connection's socket, when it has one,
// whether a read would wait.
func (c *timedConn) useRawSocket() {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw, c.readFD = raw, c.tryRead
		}
	}
}

// tryRead is readNow's one attempt, run by RawConn.Read; it reports true,
// so that the poller never waits.
func (c *timedConn) tryRead(fd uintptr) bool {
	n, err := syscall.Read(int(fd), c.p)
	for err == syscall.EINTR {
		n, err = syscall.Read(int(fd), c.p)
	}
	switch {
	case err == syscall.EAGAIN:
		c.wouldWait = true
	case err != nil:
		c.err = &net.OpError{Op: "read", Net: "tcp", Source: c.local.Addr, Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", err)}
	case n == 0 && len(c.p) > 0:
		c.err = io.EOF
	default:
		c.n = n
	}
	return true
}
