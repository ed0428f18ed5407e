package proxy

import (
	"bytes"
	"hash/maphash"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A client that closes its connection while its request waits for a whole
// (non-streamed) answer cancels the upstream request: an LLM call can run
// for tens of seconds of paid tokens nobody would read. (A stream's relay
// notices on its next write.)
//
// fasthttp neither tells a handler that its client has gone nor shows it
// the upstream connection its request goes out on. So the exchange is
// registered under its request id while it waits, and the upstream
// connection finds it by the X-Request-Id header in the request it writes
// (on an https channel, the plaintext head tlsConn writes above TLS). A
// client may send its own id, so two requests can share one: every
// upstream request registers its id while its head may be written, a
// stream's with no watch, and an id under which two were in flight is
// watched for none until all have left, so that no request is ever
// cancelled for another's client.
// One goroutine, running while any exchange waits, looks every pollClient
// at the clients of those that have waited that long, without reading
// their sockets (clientGone), and wakes the upstream read of a client that
// has gone, which then fails (timedConn.Read). A request answered within
// pollClient pays only the registration (an insert and a removal in a
// table of its own, idtable.go, no allocation) and the scan of its head
// for the id: no system call, no deadline, no clock read on its upstream
// reads.

// pollClient is how often the clients of waiting exchanges are looked at.
const pollClient = 250 * time.Millisecond

// watch is a waiting exchange's client connection, and the upstream
// connection its request went out on (set by that connection's Write).
// left records that the upstream read was ended because the client had
// gone (fasthttp reports that read's error as a plain EOF).
type watch struct {
	client net.Conn
	since  time.Time   // when the exchange began to wait
	up     *timedConn  // under waiting's lock
	left   atomic.Bool // set by the watcher, read by the exchange
}

// waiting registers the upstream requests whose heads may be written, by
// request id, with the watches of those waiting for a whole answer. An id
// two requests are under at once (a client's own, reused) is watched for
// none of them.
var waiting = struct {
	sync.Mutex
	m        idTable
	watched  atomic.Int32 // entries of m with a watch, read without the lock
	watching bool         // the watcher runs
}{}

// idKey is a request id as a key of the table: its 64-bit hash, which is
// compared at a fraction of the cost of the id's 40 bytes.
// Two ids of one hash (one pair in 2^64) are watched for neither, as two
// exchanges under one id are.
type idKey uint64

// maxIDLen is the longest request id (exchange.idBuf); a longer one in a
// head is none of the gateway's.
const maxIDLen = 40

var idSeed = maphash.MakeSeed()

func keyOf(id []byte) (k idKey, ok bool) {
	if len(id) == 0 || len(id) > maxIDLen {
		return 0, false
	}
	return idKey(maphash.Bytes(idSeed, id)), true
}

// waiter is an id's entry in waiting: the watch of the one request under
// it, nil when that is a stream or when the id has had more than one
// request at once (until n is back to 0, whichever left first).
type waiter struct {
	w *watch
	n int // requests under the id
}

// startWaiting registers an upstream request under id, with w, its
// client's watch, when it waits for a whole answer (nil for a stream);
// stopWaiting takes it back.
func startWaiting(id []byte, w *watch) {
	k, _ := keyOf(id)
	waiting.Lock()
	s := waiting.m.entry(k)
	switch {
	case s.e.n > 0:
		if s.e.w != nil {
			waiting.watched.Add(-1)
		}
		s.e = waiter{n: s.e.n + 1} // shared: watched for none
	case w != nil:
		waiting.watched.Add(1)
		w.up = nil // a failover's new attempt: the last one's connection may serve another request now
		s.e = waiter{w: w, n: 1}
		if !waiting.watching {
			waiting.watching = true
			go watchClients()
		}
	default:
		s.e = waiter{n: 1}
	}
	waiting.Unlock()
}

func stopWaiting(id []byte) {
	k, _ := keyOf(id)
	waiting.Lock()
	if e := waiting.m.leave(k); e.n == 1 && e.w != nil {
		waiting.watched.Add(-1)
	}
	waiting.Unlock()
}

// strRequestIDName is the request id's header as the upstream request's
// head spells it: fasthttp writes "\r\n" + name + ": " + value.
var strRequestIDName = []byte("X-Request-Id: ")

// waitingFor returns the watch of the exchange whose request head p is,
// written on c, or nil when it does not wait or its id is shared.
func waitingFor(p []byte, c *timedConn) *watch {
	id := requestIDIn(p)
	if id == nil {
		return nil
	}
	k, ok := keyOf(id)
	if !ok {
		return nil
	}
	waiting.Lock()
	w := waiting.m.get(k).w
	if w != nil { // else none, a stream, or ambiguous
		w.up = c
	}
	waiting.Unlock()
	return w
}

// requestIDIn returns the value of the X-Request-Id line of the request
// head p, nil when it has none. The name is looked for from its 'X',
// which the head's other lines rarely hold, and then checked to start a
// line: searching for "\r\n" first stops at every line of the head.
func requestIDIn(p []byte) []byte {
	for from := 0; ; {
		i := bytes.Index(p[from:], strRequestIDName)
		if i < 0 {
			return nil
		}
		i += from
		if i >= 2 && p[i-2] == '\r' && p[i-1] == '\n' {
			id := p[i+len(strRequestIDName):]
			if j := bytes.IndexByte(id, '\r'); j >= 0 {
				id = id[:j]
			}
			return id
		}
		from = i + 1
	}
}

// watchClients looks at the clients of the waiting exchanges every
// pollClient, until none waits.
func watchClients() {
	t := time.NewTicker(pollClient)
	defer t.Stop()
	var long []waitingClient
	for now := range t.C {
		var busy bool
		if long, busy = waitingSince(long[:0], now.Add(-pollClient)); !busy {
			return
		}
		for _, c := range long {
			if clientGone(c.client) {
				wake(c)
			}
		}
	}
}

// waitingClient is an exchange the watcher looks at, with its key in
// waiting and its client, read under the lock: once the exchange stops
// waiting its watch is reset for the next request.
type waitingClient struct {
	k      idKey
	w      *watch
	client net.Conn
}

// waitingSince appends the exchanges that have waited since before t on
// an upstream connection; when none waits at all it reports false and
// marks the watcher stopped. The clients are looked at outside the lock,
// which the request path takes.
func waitingSince(dst []waitingClient, t time.Time) (_ []waitingClient, busy bool) {
	waiting.Lock()
	defer waiting.Unlock()
	if waiting.watched.Load() == 0 { // streams alone need no watcher
		waiting.watching = false
		return dst, false
	}
	waiting.m.all(func(k idKey, e waiter) {
		if e.w != nil && e.w.up != nil && e.w.since.Before(t) && !e.w.left.Load() {
			dst = append(dst, waitingClient{k, e.w, e.w.client})
		}
	})
	return dst, true
}

// wake ends the upstream read of an exchange whose client has gone, if
// it still waits: its connection's read deadline is moved to the past.
// A connection woken just after it was handed to another request reads
// on (timedConn.Read tells a wake from its own deadline).
func wake(c waitingClient) {
	waiting.Lock()
	defer waiting.Unlock()
	if e := waiting.m.get(c.k); e.w != c.w || c.w.up == nil {
		return // it stopped waiting meanwhile, or waits again with no head written yet
	}
	c.w.left.Store(true)
	c.w.up.Conn.SetReadDeadline(time.Unix(1, 0)) //nolint:errcheck // a closed connection needs no waking
}
