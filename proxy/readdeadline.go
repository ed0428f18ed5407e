package proxy

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// lazyReadDeadline sets a client connection's read deadlines, keeping the
// one armed when a new one far off (farDeadline or more ahead: the
// server's two-minute idle and read timeouts) falls just before it.
//
// fasthttp sets two read deadlines on every request of a kept-alive
// connection, two minutes ahead each: the idle one before its first byte
// and the read one at it. Setting one costs a lock and a timer update in
// the runtime's poller, ~500 instructions, more than the rest of the
// gateway's clock work on a request. So a far deadline is armed
// 1/deadlineSlack of its distance later than asked, and a later far one
// that the armed one overshoots by no more than that keeps it: a far
// timeout may fire up to 1/64 late (under 2 s of two minutes), and a busy
// connection re-arms about once per 1/64 of the timeout instead of twice
// a request. A deadline nearer than farDeadline, and no deadline, are set
// exactly, as asked.
type lazyReadDeadline struct {
	mu sync.Mutex // held while a deadline is set: armed says what the connection has
	// armed is the read deadline set on the connection (unix nanos) when
	// it was a far one, 0 when it was not or there is none.
	armed atomic.Int64
}

const (
	farDeadline   = time.Minute
	deadlineSlack = 64
)

// set sets conn's read deadline to t, or keeps the armed one (see the
// type).
func (d *lazyReadDeadline) set(conn net.Conn, t time.Time) error {
	if t.IsZero() {
		return d.arm(conn, t, false, false)
	}
	ahead := time.Until(t)
	if ahead < farDeadline {
		return d.arm(conn, t, false, false)
	}
	slack := ahead / deadlineSlack
	if late := time.Duration(d.armed.Load() - t.UnixNano()); late >= 0 && late <= slack {
		return nil
	}
	return d.arm(conn, t.Add(slack), true, false)
}

// setBoth is conn.SetDeadline: the read deadline it sets is exact.
func (d *lazyReadDeadline) setBoth(conn net.Conn, t time.Time) error {
	return d.arm(conn, t, false, true)
}

// arm sets conn's read deadline (and write deadline: both) to t, and
// notes it as armed when far.
func (d *lazyReadDeadline) arm(conn net.Conn, t time.Time, far, both bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed.Store(0) // while it changes: no set is skipped against it
	var err error
	if both {
		err = conn.SetDeadline(t)
	} else {
		err = conn.SetReadDeadline(t)
	}
	if err == nil && far {
		d.armed.Store(t.UnixNano())
	}
	return err
}
