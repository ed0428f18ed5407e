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
