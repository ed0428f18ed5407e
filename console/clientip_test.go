package console

import (
	"net"
	"net/netip"
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestClientIP(t *testing.T) {
	c := &Console{proxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}}
	for _, tc := range []struct {
		peer string
		xff  []string // one header line each
		want string
	}{
		{"203.0.113.9", nil, "203.0.113.9"},
		{"203.0.113.9", []string{"198.51.100.1"}, "203.0.113.9"}, // not a trusted peer: the header is ignored
		{"10.1.1.1", nil, "10.1.1.1"},
		{"10.1.1.1", []string{"198.51.100.1"}, "198.51.100.1"},
		{"10.1.1.1", []string{"6.6.6.6, 198.51.100.1, 10.2.2.2"}, "198.51.100.1"}, // the client may forge the left
		{"10.1.1.1", []string{"6.6.6.6", "198.51.100.1 ,10.2.2.2"}, "198.51.100.1"},
		{"10.1.1.1", []string{"10.3.3.3, 10.2.2.2"}, "10.3.3.3"}, // all trusted: the farthest
		{"10.1.1.1", []string{"198.51.100.1, garbage"}, "10.1.1.1"},
		{"10.1.1.1", []string{"2001:db8::1, fd00::2"}, "2001:db8::1"},
		{"10.1.1.1", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"10.1.1.1", []string{""}, "10.1.1.1"},
	} {
		var req fasthttp.Request
		for _, v := range tc.xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		var rc fasthttp.RequestCtx
		rc.Init(&req, &net.TCPAddr{IP: net.ParseIP(tc.peer), Port: 1}, nil)
		if got := c.clientIP(&rc).String(); got != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
	}
}

// Behind a trusted proxy, failed logins count against the client the proxy
// names, not against the proxy (which would lock everyone out at once).
func TestLoginLimitBehindTrustedProxy(t *testing.T) {
	e := newEnv(t)
	e.c.proxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
	proxy := e.browser("127.0.0.2")
	for i := range 5 {
		r := proxy.do("POST", "/console/api/login", map[string]string{"name": "user" + strconv.Itoa(i), "password": "guess-guess"},
			"X-Forwarded-For", "198.51.100.1")
		if r.status != 401 {
			t.Fatalf("failure %d: %d", i, r.status)
		}
	}
	r := proxy.do("POST", "/console/api/login", map[string]string{"name": AdminName, "password": adminPassword},
		"X-Forwarded-For", "198.51.100.1")
	if r.status != 429 {
		t.Fatalf("6th try of the client behind the proxy: %d, want 429", r.status)
	}
	r = proxy.do("POST", "/console/api/login", map[string]string{"name": AdminName, "password": adminPassword},
		"X-Forwarded-For", "198.51.100.2")
	if r.status != 200 {
		t.Fatalf("another client behind the same proxy: %d, want 200", r.status)
	}
	// A peer that is not trusted cannot pick its IP by sending the header.
	direct := e.browser("127.0.0.3")
	for i := range 5 {
		direct.do("POST", "/console/api/login", map[string]string{"name": "x" + strconv.Itoa(i), "password": "guess-guess"},
			"X-Forwarded-For", "192.0.2."+strconv.Itoa(i))
	}
	r = direct.do("POST", "/console/api/login", map[string]string{"name": AdminName, "password": adminPassword},
		"X-Forwarded-For", "192.0.2.99")
	if r.status != 429 {
		t.Fatalf("an untrusted peer changing X-Forwarded-For: %d, want 429", r.status)
	}
}
