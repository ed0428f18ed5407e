package proxy

import (
	"errors"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// timedConn enforces the time-to-first-byte and idle timeouts of a channel:
// every read has a deadline, the first-byte one while a written request
// awaits its first response byte, the idle one between later reads. A
// deadline the HTTP client sets (the request's total deadline) still wins
// when it is sooner.
//
// Setting a deadline costs a lock and a timer update in the runtime's
// poller, on every read of a stream. So a read keeps the deadline already
// armed while it lies in [want, want+timeout/16], want being the deadline
// the read needs: the timeout may fire up to a sixteenth late, and the
// deadline is re-armed about once per sixteenth of the timeout instead of
// on every read. The client's own deadline is kept exactly.
type timedConn struct {
	net.Conn
	firstByte, idle time.Duration
	// awaiting: a request's head was written and no byte of its answer
	// read yet. Under TLS (secure) the bytes are the plaintext's, which
	// tlsConn writes and reads: TLS's own records (a handshake's, a
	// session ticket, a record's header come before its body) are no
	// request and no answer.
	awaiting atomic.Bool
	outer    atomic.Int64 // unix nanos of the client's read deadline, 0 for none
	armed    int64        // unix nanos of the deadline set on Conn; used by Read alone
	// wrote is the clock as the head of the request awaiting its answer
	// began to be written (unix nanos), when the request went out in that
	// one write, without waiting: the first read's arm takes it as now, a
	// few microseconds early, rather than read the clock again. 0 once
	// taken, and from a later write of the request or one that waits.
	wrote atomic.Int64

	// beforeWait, when set, runs when a read is about to wait for the
	// upstream: the readers above the connection (fasthttp's, TLS's) have
	// nothing buffered and neither has the socket. It is the last moment
	// to send on what came in before. A stream relay sets it while it
	// runs, on the goroutine that reads. When it reports false (its client
	// is gone) the read fails with errClientGone instead of waiting.
	beforeWait func() bool
	local      connAddr

	// watch, when set, is the client of the request under way, waiting
	// for a whole answer (see clientgone.go): when it has gone, the
	// watcher wakes the read, which fails. The head of each request sets
	// it: the head Write gets, or with secure the plaintext head the TLS
	// connection above gets (tlsConn), Write seeing only ciphertext.
	watch  *watch
	secure bool

	// With beforeWait set, a read asks the socket through raw (when the
	// connection has one) whether it holds anything, and waits there.
	raw    syscall.RawConn
	readFD func(fd uintptr) bool // tryRead, bound once
	p      []byte                // tryRead's buffer and results
	n      int
	err    error
	sent   bool // beforeWait ran in this read

	// The client's write deadline (unix nanos, 0 for none) is set on
	// Conn only for a write that has to wait: the HTTP client sets one
	// for every request, which cost a lock and a timer update in the
	// runtime's poller each time, and a request's head and body nearly
	// always go into the socket's buffer at once. With raw, a write first
	// writes what the socket takes without waiting (writeFD), under no
	// deadline (armedW 0) and with no look at the clock, and only what is
	// left waits under the client's deadline (writeWaiting).
	// A write that waits (waitingW) has its deadline moved by a later
	// SetWriteDeadline, as net.Conn's contract says of pending I/O; wmu
	// orders the two's settings of Conn's deadline (armedW).
	wantW    atomic.Int64
	waitingW atomic.Bool // set and cleared under wmu
	wmu      sync.Mutex
	armedW   int64                 // the write deadline set on Conn: by Write, or under wmu while waitingW
	writeFD  func(fd uintptr) bool // tryWrite, bound once
	wp       []byte                // tryWrite's bytes and results: a TLS close may write while a read waits
	wn       int
	werr     error
}

func newTimedConn(conn net.Conn, firstByte, idle time.Duration) *timedConn {
	c := &timedConn{Conn: conn, firstByte: firstByte, idle: idle}
	c.local = connAddr{Addr: conn.LocalAddr(), conn: c}
	c.useRawSocket()
	return c
}

// untimed is a timeout longer than any deadline a read is given: under it
// a read waits until the client's deadline (SetReadDeadline) alone.
const untimed = time.Duration(math.MaxInt64 / 4) // 73 years: now plus it fits in unix nanos

// errClientGone ends an upstream read whose stream has no client left.
var errClientGone = errors.New("client went away")

// connAddr is the local address of an upstream connection, with the
// connection: fasthttp shows a response's connection to no one but hands on
// its LocalAddr, so a relay finds its connection through it.
type connAddr struct {
	net.Addr
	conn *timedConn
}

func (c *timedConn) LocalAddr() net.Addr { return &c.local }

// upstreamConn returns the connection a response is read from, when the
// gateway dialed it.
func upstreamConn(resp *fasthttp.Response) *timedConn {
	if resp == nil {
		return nil
	}
	if a, ok := resp.LocalAddr().(*connAddr); ok {
		return a.conn
	}
	return nil
}

// beginRequest begins the request whose head p is, about to be written:
// it sets the request's watch, its client's if it waits for a whole
// answer, else none. When the request's write deadline has passed it
// fails with a timeout instead, before a byte of the request goes out:
// fasthttp computes the deadline before it takes a connection, so a dial
// and handshake may have used it up, and a request written then would be
// sent (and billed) with no time left to read its answer. The clock is
// read here, once a request, not at every write, and its reading serves
// the first read's deadline too (wrote).
func (c *timedConn) beginRequest(p []byte) error {
	c.watch = nil
	if w := c.wantW.Load(); w != 0 {
		now := time.Now().UnixNano()
		if now >= w {
			c.awaiting.Store(false)
			return c.opError("write", os.ErrDeadlineExceeded)
		}
		c.wrote.Store(now)
	}
	if waiting.watched.Load() > 0 {
		c.watch = waitingFor(p, c)
	}
	return nil
}

// startWrite notes a write of a request's plaintext p: the head of a new
// request begins it (beginRequest); any later write of the request makes
// the head's clock too old to count the first byte's wait from (wrote).
func (c *timedConn) startWrite(p []byte) error {
	if c.awaiting.Swap(true) {
		c.wrote.Store(0)
		return nil
	}
	return c.beginRequest(p)
}

func (c *timedConn) Write(p []byte) (int, error) {
	if !c.secure {
		if err := c.startWrite(p); err != nil {
			return 0, err
		}
	}
	n := 0
	if c.raw != nil {
		var err error
		if n, err = c.writeNow(p); err != nil || n == len(p) {
			return n, err
		}
	}
	m, err := c.writeWaiting(p[n:])
	return n + m, err
}

// writeWaiting writes p under the client's write deadline, set on Conn,
// where SetWriteDeadline moves it while the write waits. A deadline
// already past fails the write as it would wait.
func (c *timedConn) writeWaiting(p []byte) (int, error) {
	c.wrote.Store(0) // the write's start is no longer now
	c.wmu.Lock()
	c.waitingW.Store(true)
	err := c.armWrite(c.wantW.Load())
	c.wmu.Unlock()
	n := 0
	if err == nil {
		n, err = c.Conn.Write(p)
	}
	c.wmu.Lock()
	c.waitingW.Store(false)
	c.wmu.Unlock()
	return n, err
}

// opError words err as the connection's own Read or Write (op) would.
func (c *timedConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local.Addr, Addr: c.RemoteAddr(), Err: err}
}

// writeNow writes what the socket takes of p without waiting, with no
// deadline on Conn (a deadline left from a write that waited could have
// passed since, which would fail the write).
func (c *timedConn) writeNow(p []byte) (int, error) {
	if err := c.armWrite(0); err != nil {
		return 0, err
	}
	c.wp, c.wn, c.werr = p, 0, nil
	err := c.raw.Write(c.writeFD) // the poller's error: closed
	n := c.wn
	if oe, ok := err.(*net.OpError); ok { // worded "raw-write", with no source
		err = c.opError("write", oe.Err)
	} else if err == nil {
		err = c.werr
	}
	c.wp, c.werr = nil, nil
	return n, err
}

// armWrite sets the write deadline t (unix nanos, 0 for none) on Conn,
// unless it is set already.
func (c *timedConn) armWrite(t int64) error {
	if c.armedW == t {
		return nil
	}
	var d time.Time
	if t != 0 {
		d = time.Unix(0, t)
	}
	if err := c.Conn.SetWriteDeadline(d); err != nil {
		return err
	}
	c.armedW = t
	return nil
}

func (c *timedConn) Read(p []byte) (int, error) {
	for {
		n, err := c.read(p)
		if err != nil && n == 0 && c.watch != nil && c.watch.left.Load() {
			return 0, errClientGone
		}
		if err == nil || n > 0 || !c.woken(err) {
			if !c.secure {
				c.got(n)
			}
			return n, err
		}
	}
}

func (c *timedConn) read(p []byte) (int, error) {
	if err := c.arm(); err != nil {
		return 0, err
	}
	if c.beforeWait == nil {
		return c.Conn.Read(p)
	}
	if c.raw != nil {
		return c.readOrWait(p)
	}
	// No socket to ask: send on what came in before every read (still
	// correct, a write earlier than needed at worst).
	if !c.beforeWait() {
		return 0, errClientGone
	}
	if err := c.arm(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// woken reports whether a read timed out before the deadline armed: the
// client watcher woke it (see wake) for a request that had ended. The
// next arm sets the deadline again.
func (c *timedConn) woken(err error) bool {
	if !isTimeout(err) || time.Now().UnixNano() >= c.armed {
		return false
	}
	c.armed = 0
	return true
}

// arm sets the read deadline the next read needs, unless the one set is
// close enough.
func (c *timedConn) arm() error {
	d := c.idle
	if c.awaiting.Load() {
		d = c.firstByte
	}
	now := c.wrote.Load()
	if now != 0 {
		c.wrote.Store(0)
	} else {
		now = time.Now().UnixNano()
	}
	lo, hi := now+int64(d), now+int64(d+d/16)
	if o := c.outer.Load(); o != 0 {
		lo, hi = min(lo, o), min(hi, o)
	}
	if c.armed < lo || c.armed > hi {
		if err := c.Conn.SetReadDeadline(time.Unix(0, hi)); err != nil {
			return err
		}
		c.armed = hi
	}
	return nil
}

// got notes that a read returned bytes of the answer: the upstream has
// begun to answer, so later reads wait under the idle timeout, not the
// first-byte one.
func (c *timedConn) got(n int) {
	if n > 0 && c.awaiting.Load() {
		c.awaiting.Store(false)
	}
}

// readOrWait reads what the socket holds; when the read would wait, it
// sends on what came in before (beforeWait), arms again, as sending may
// have taken a while, and waits for the socket in the same call (tryRead):
// a wait costs one read that finds nothing, not one before beforeWait and
// another before the poller waits.
func (c *timedConn) readOrWait(p []byte) (int, error) {
	c.p, c.n, c.err, c.sent = p, 0, nil, false
	err := c.raw.Read(c.readFD) // the poller's error: deadline passed, closed
	n := c.n
	if err == nil {
		err = c.err
	}
	c.p, c.err = nil, nil
	return n, err
}

func (c *timedConn) SetReadDeadline(t time.Time) error {
	var n int64
	if !t.IsZero() {
		n = t.UnixNano()
	}
	c.outer.Store(n)
	return nil // applied by the next Read
}

// SetWriteDeadline keeps t for the writes that wait (writeWaiting), and
// moves the deadline of one waiting now. A write that does not wait pays
// the load of waitingW here.
//
// The store of wantW here and the store of waitingW in writeWaiting each
// come before the other's load: either this sees the write waiting, or the
// write arms the deadline stored here.
func (c *timedConn) SetWriteDeadline(t time.Time) error {
	var n int64
	if !t.IsZero() {
		n = t.UnixNano()
	}
	c.wantW.Store(n)
	if !c.waitingW.Load() {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.waitingW.Load() {
		return nil // it ended meanwhile
	}
	return c.armWrite(c.wantW.Load()) // the latest, whichever of two calls takes the lock last
}

// SetDeadline fails when moving the deadline of a waiting write fails
// (the connection is closed, say).
func (c *timedConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetWriteDeadline(t), c.SetReadDeadline(t))
}

// isTimeout reports whether err is a timeout of any layer.
// (Not only net.Error: fasthttputil's in-memory connections, the demo
// channel's, time out with an error that has Timeout but not Temporary.)
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, fasthttp.ErrTimeout) || (errors.As(err, &te) && te.Timeout())
}
