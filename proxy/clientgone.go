package proxy

import (
	"bytes"
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
// registered under its request id while it waits; the upstream connection
// finds it by the X-Request-Id header in the request it writes, and while
// a read would wait it wakes every pollClient to look at the client's
// socket without reading it (clientGone). A request answered without a
// wait pays only the registration (a map insert and delete, no allocation)
// and the scan of its head for the id.

// pollClient is how often a waiting upstream read looks at its client.
const pollClient = 250 * time.Millisecond

// watch is a waiting exchange's client connection, as its upstream
// connection sees it (clientGone looks at it). left records that the
// upstream read was ended because the client had gone (fasthttp reports
// that read's error as a plain EOF). The exchange's goroutine, which runs
// the upstream read, alone uses it.
type watch struct {
	client net.Conn
	left   bool
}

// waiting registers the watches of the exchanges waiting for a whole
// answer, by request id. An id two exchanges wait under at once (a
// client's own, reused) is watched for neither.
var waiting = struct {
	sync.Mutex
	m map[idKey]waiter
	n atomic.Int32 // len(m), read without the lock
}{m: map[idKey]waiter{}}

// idKey is a request id as a map key that costs no allocation (ids are at
// most 40 bytes, see exchange.idBuf).
type idKey [40]byte

func keyOf(id []byte) (k idKey, ok bool) {
	return k, len(id) <= len(k) && copy(k[:], id) > 0
}

type waiter struct {
	w *watch
	n int // exchanges waiting under the id
}

// startWaiting registers w under id; stopWaiting takes it back.
func startWaiting(id []byte, w *watch) {
	k, _ := keyOf(id)
	waiting.Lock()
	e, dup := waiting.m[k]
	if !dup {
		waiting.n.Add(1)
	}
	waiting.m[k] = waiter{w: w, n: e.n + 1}
	waiting.Unlock()
}

func stopWaiting(id []byte) {
	k, _ := keyOf(id)
	waiting.Lock()
	if e := waiting.m[k]; e.n > 1 {
		waiting.m[k] = waiter{w: e.w, n: e.n - 1}
	} else if e.n == 1 {
		delete(waiting.m, k)
		waiting.n.Add(-1)
	}
	waiting.Unlock()
}

var strRequestIDLine = []byte("\r\nX-Request-Id: ")

// waitingFor returns the watch of the exchange whose request head p is, or
// nil when it does not wait.
func waitingFor(p []byte) *watch {
	i := bytes.Index(p, strRequestIDLine)
	if i < 0 {
		return nil
	}
	id := p[i+len(strRequestIDLine):]
	if j := bytes.IndexByte(id, '\r'); j >= 0 {
		id = id[:j]
	}
	k, ok := keyOf(id)
	if !ok {
		return nil
	}
	waiting.Lock()
	e := waiting.m[k]
	waiting.Unlock()
	if e.n != 1 {
		return nil // none, or ambiguous
	}
	return e.w
}
