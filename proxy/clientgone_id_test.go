package proxy

import "testing"

// requestIDIn finds the X-Request-Id line of a head, and only a line of
// that name: not the name inside another header's value, nor a longer
// name ending in it.
func TestRequestIDIn(t *testing.T) {
	for _, c := range []struct{ name, head, want string }{
		{"gateway's head", string(upstreamHead(t, "req_abc", 100)), "req_abc"},
		{"none", "POST / HTTP/1.1\r\nHost: up\r\n\r\n{}", ""},
		{"in a value first", "POST / HTTP/1.1\r\nX-Note: X-Request-Id: no\r\nX-Request-Id: yes\r\n\r\n", "yes"},
		{"longer name first", "POST / HTTP/1.1\r\nX-X-Request-Id: no\r\nX-Request-Id: yes\r\n\r\n", "yes"},
		{"only in a value", "POST / HTTP/1.1\r\nX-Note: X-Request-Id: no\r\n\r\n", ""},
		{"at the start", "X-Request-Id: no\r\n\r\n", ""},
		{"cut after the value", "POST / HTTP/1.1\r\nX-Request-Id: req_x", "req_x"},
		{"empty value", "POST / HTTP/1.1\r\nX-Request-Id: \r\n\r\n", ""},
	} {
		if got := string(requestIDIn([]byte(c.head))); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// An id under which two requests were at once (a client's own, sent
// twice) is watched for none until both have left, whichever leaves
// first; a stream's registration counts with no watch; a watch
// registered again forgets the connection of its last attempt.
func TestWaitingSharedID(t *testing.T) {
	const id = "client-own-id"
	head := upstreamHead(t, id, 10)
	c := &timedConn{}
	var a, b watch
	find := func(want *watch, when string) {
		t.Helper()
		if got := waitingFor(head, c); got != want {
			t.Errorf("%s: the head's watch is %p, want %p", when, got, want)
		}
	}
	a.up = c
	startWaiting([]byte(id), &a)
	if a.up != nil {
		t.Error("a watch registered again keeps its last connection")
	}
	find(&a, "one waiting")
	startWaiting([]byte(id), nil) // a stream under the same id
	find(nil, "a stream too")
	stopWaiting([]byte(id)) // the stream leaves first
	find(nil, "the stream gone, the id shared before")
	stopWaiting([]byte(id))
	startWaiting([]byte(id), &a)
	startWaiting([]byte(id), &b)
	stopWaiting([]byte(id)) // the later one, b, leaves first
	find(nil, "b gone, the id shared before")
	stopWaiting([]byte(id))
	startWaiting([]byte(id), &b)
	find(&b, "all gone, one waiting again")
	stopWaiting([]byte(id))
	if n := waiting.watched.Load(); n != 0 {
		t.Errorf("%d watches left", n)
	}
	startWaiting([]byte(id), nil)
	defer stopWaiting([]byte(id))
	if n := waiting.watched.Load(); n != 0 {
		t.Errorf("a stream counts as %d watches", n)
	}
}

// The watcher's look, taken while a first attempt waited on its upstream
// connection, finds the exchange waiting again for a failover's attempt
// whose head is not written yet: waking it must neither touch a
// connection (it has none; this crashed the watcher) nor mark it gone.
func TestWakeAfterFailoverBeforeHead(t *testing.T) {
	const id = "failover-id"
	var w watch
	startWaiting([]byte(id), &w)
	if got := waitingFor(upstreamHead(t, id, 10), &timedConn{}); got != &w {
		t.Fatalf("the first attempt's head found %p, want %p", got, &w)
	}
	k, _ := keyOf([]byte(id))
	seen := waitingClient{k, &w, nil}
	stopWaiting([]byte(id))
	startWaiting([]byte(id), &w) // the next channel's attempt
	defer stopWaiting([]byte(id))
	wake(seen)
	if w.left.Load() {
		t.Error("an attempt with no connection yet was marked gone")
	}
}
