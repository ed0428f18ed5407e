package proxy

// A connection keeps a small read buffer, yet headers up to maxHeaderSize
// are served.
//
// fasthttp reads a request's headers whole into the connection's read
// buffer, whose size therefore bounds them, and with StreamRequestBody it
// keeps that buffer for the connection's life, an open stream's included.
// So the gateway serves connections with a readBufferSize buffer, and a
// request whose headers do not fit is served again by a second server whose
// buffer is maxHeaderSize: each connection follows what is read from it
// from the start of a request until the handler runs, and when those reads
// fill the first server's buffer from its start (readBufferSize bytes, read
// one after another into it), copies the buffer into a pooled recording:
// when the first server then reports the headers too large
// (fasthttp.ErrSmallBuffer, its buffer full of them), the recording holds
// exactly what that buffer held. The connection then goes
// to the second server through a listener of its own (handoff), so that
// the second server owns it as one it accepted: it serves it, the
// recording read first, until it closes, and its Shutdown closes it when
// idle; the first server lets go of it at once.
// Requests whose first reads come short of the buffer, nearly all of them,
// pay no copy: only a comparison of where each read landed; a connection
// that has moved keeps the larger buffer.

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// readBufferSize is what a connection's read buffer holds, and what a
// request's headers may take on the first server.
const readBufferSize = 4 << 10

// headListener hands out connections that record their requests' heads.
type headListener struct{ net.Listener }

func (l headListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &headConn{Conn: c, recording: true}, nil
}

// recordings hold what connections read of their requests' heads.
var recordings = sync.Pool{New: func() any { b := make([]byte, 0, readBufferSize); return &b }}

// headConn is a connection as the first server sees it. rec and
// recording are used by the connection's own goroutine alone: fasthttp
// reads, runs the handler and reports the connection idle there (Close may
// come from another, as Shutdown's).
type headConn struct {
	net.Conn
	// read is what was read since the request began, where it was read
	// to: the reads, one after another, into the server's read buffer
	// (read's capacity ends where that buffer does).
	read      []byte
	first     [1]byte // the request's first byte, when it was read alone (lead 1)
	lead      int
	rec       *[]byte // the buffer's copy, once the reads fill it; nil until then
	recording bool    // from a request's start until its handler runs
	// id is the request id the gateway's handler gave the request it runs
	// (nil outside it), in idBuf: begin takes it from here, which costs
	// less than finding it in the response header it was written to.
	id    []byte
	idBuf [40]byte
	moved atomic.Bool
	reads lazyReadDeadline // the server's read deadlines, far ones kept a little late
}

func (c *headConn) Read(p []byte) (int, error) {
	if c.moved.Load() {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(p)
	if c.recording {
		if n > 0 {
			c.record(p[:n])
		}
		if err != nil { // the connection's end
			c.stopRecording()
		}
	}
	return n, err
}

// record follows p, the bytes a read put where the last one ended (the
// server's read buffer fills from its start; fasthttp reads a request's
// first byte alone, as it waits for one, and puts it at the buffer's
// start): once they fill the buffer, a copy of it is kept. A read beyond
// the buffer, or elsewhere (bytes of a pipelined request before it, moved
// by the reader), ends the recording: the headers then fit in the buffer,
// or cannot be replayed.
func (c *headConn) record(p []byte) {
	if c.read == nil {
		if c.lead == 0 && len(p) == 1 && cap(p) == 1 {
			c.first[0], c.lead = p[0], 1
			return
		}
		c.read = p[:0]
	}
	if c.lead+len(c.read)+len(p) > readBufferSize || cap(c.read)-len(c.read) != cap(p) ||
		&c.read[:len(c.read)+1][len(c.read)] != &p[0] {
		c.stopRecording()
		return
	}
	c.read = c.read[:len(c.read)+len(p)]
	if c.lead+len(c.read) == readBufferSize && cap(c.read) == len(c.read) {
		c.rec = recordings.Get().(*[]byte)
		*c.rec = append(append((*c.rec)[:0], c.first[:c.lead]...), c.read...)
	}
}

// startRecording starts the record of a request's head: the connection
// waits for its next request (the server reports it idle).
func (c *headConn) startRecording() { c.recording = true }

// stopRecording ends the record: the request's handler runs.
func (c *headConn) stopRecording() {
	c.recording, c.read, c.lead = false, nil, 0
	if c.rec != nil {
		*c.rec = (*c.rec)[:0]
		recordings.Put(c.rec)
		c.rec = nil
	}
}

// handOff gives the connection up for the second server, which gets it
// with the head recorded to read again; ok is false when the recording
// does not hold all the first server's buffer held (bytes of a pipelined
// request read before it began): those headers are refused.
func (c *headConn) handOff() (_ *replayConn, ok bool) {
	if !c.recording || c.rec == nil || len(*c.rec) != readBufferSize {
		return nil, false
	}
	r := &replayConn{Conn: c.Conn, rec: c.rec, pending: *c.rec}
	c.rec, c.recording, c.read, c.lead = nil, false, nil, 0
	c.moved.Store(true)
	return r, true
}

// The deadlines of a moved connection are the second server's to set.
func (c *headConn) SetDeadline(t time.Time) error {
	if c.moved.Load() {
		return nil
	}
	return c.reads.setBoth(c.Conn, t)
}

func (c *headConn) SetReadDeadline(t time.Time) error {
	if c.moved.Load() {
		return nil
	}
	return c.reads.set(c.Conn, t)
}

func (c *headConn) SetWriteDeadline(t time.Time) error {
	if c.moved.Load() {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *headConn) Write(p []byte) (int, error) {
	if c.moved.Load() { // the first server's answer to the headers it could not read
		return 0, net.ErrClosed
	}
	return c.Conn.Write(p)
}

// Close closes the connection, unless it moved: the second server closes
// it. (A recording under way is left to the collector: Close may run on
// another goroutine than the reads.)
func (c *headConn) Close() error {
	if c.moved.Load() {
		return nil
	}
	return c.Conn.Close()
}

// NetConn is the socket, for clientGone.
func (c *headConn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes the socket, for refuseBody.
func (c *headConn) CloseWrite() error { return closeWrite(c.Conn) }

// replayConn is a moved connection as the second server sees it: the
// recorded head first, then the socket.
type replayConn struct {
	net.Conn
	rec     *[]byte
	pending []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		return c.Conn.Read(p)
	}
	n := copy(p, c.pending)
	if c.pending = c.pending[n:]; len(c.pending) == 0 {
		*c.rec = (*c.rec)[:0]
		recordings.Put(c.rec)
		c.rec = nil
	}
	return n, nil
}

func (c *replayConn) NetConn() net.Conn { return c.Conn }

func (c *replayConn) CloseWrite() error { return closeWrite(c.Conn) }

func closeWrite(c net.Conn) error {
	if hc, ok := c.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return net.ErrClosed
}

// connState starts a connection's recording when it waits for a request.
func connState(c net.Conn, s fasthttp.ConnState) {
	if hc, ok := c.(*headConn); ok && s == fasthttp.StateIdle {
		hc.startRecording()
	}
}

// headRead marks the end of a request's head: its handler runs. It
// returns the connection, nil for one not accepted by headListener.
func headRead(ctx *fasthttp.RequestCtx) *headConn {
	hc, ok := ctx.Conn().(*headConn)
	if ok {
		hc.stopRecording()
	}
	return hc
}

// handlerID is the request id the gateway's handler gave the request ctx
// runs, nil when it gives none now or the connection keeps none (an
// in-process request, one served by the second server).
func handlerID(ctx *fasthttp.RequestCtx) []byte {
	if hc, ok := ctx.Conn().(*headConn); ok {
		return hc.id
	}
	return nil
}

// firstServerError is the first server's ErrorHandler: headers over its
// buffer move the connection to the second server, which serves it (and
// this request again); other errors are answered.
func (g *Gateway) firstServerError(ctx *fasthttp.RequestCtx, err error) {
	if errors.As(err, new(*fasthttp.ErrSmallBuffer)) {
		if hc, ok := ctx.Conn().(*headConn); ok {
			if r, ok := hc.handOff(); ok {
				g.handoff.give(r)
				return // the first server's answer goes nowhere, its Close closes nothing
			}
		}
	}
	headRead(ctx)
	g.serverError(ctx, err)
}

// handoff is the second server's listener: it accepts the connections the
// first server gives up.
type handoff struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	addr   net.Addr
}

func newHandoff() *handoff {
	return &handoff{conns: make(chan net.Conn), closed: make(chan struct{}), addr: &net.TCPAddr{}}
}

func (h *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.closed:
		return nil, net.ErrClosed
	}
}

// give passes c to the server accepting; once the listener is closed (the
// gateway shuts down) it closes c instead.
func (h *handoff) give(c net.Conn) {
	select {
	case h.conns <- c:
	case <-h.closed:
		c.Close()
	}
}

func (h *handoff) Close() error {
	h.once.Do(func() { close(h.closed) })
	return nil
}

func (h *handoff) Addr() net.Addr { return h.addr }
