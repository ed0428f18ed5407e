package proxy

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestHeaderPairs: fasthttp's headers keep their pairs as headerPair is
// laid out (else every header is set through fasthttp's setters, slower),
// a pair appended writes what fasthttp's own setter writes, and every
// style's passed headers are appended (none is a special header).
func TestHeaderPairs(t *testing.T) {
	if responsePairsOf(&fasthttp.ResponseHeader{}) == nil || requestPairsOf(&fasthttp.RequestHeader{}) == nil {
		t.Fatal("fasthttp's headers keep their pairs in another layout than headerPair's: headers are passed through its setters")
	}
	var set, appended fasthttp.ResponseHeader
	for _, h := range []*fasthttp.ResponseHeader{&set, &appended} {
		h.SetContentType("application/json")
		h.Set("X-Request-Id", "gw_1")
	}
	set.SetCanonical([]byte("X-Upstream-Request-Id"), []byte("req_1"))
	set.SetCanonical([]byte("Openai-Processing-Ms"), nil)
	appendPair(responsePairsOf(&appended), []byte("X-Upstream-Request-Id"), []byte("req_1"))
	appendPair(responsePairsOf(&appended), []byte("Openai-Processing-Ms"), nil)
	if got, want := string(appended.Header()), string(set.Header()); got != want {
		t.Errorf("appended:\n%s\nset:\n%s", got, want)
	}
	set.Reset()
	appended.Reset() // its pairs' storage kept, and used again
	set.SetCanonical([]byte("X-Upstream-Request-Id"), []byte("req_2"))
	appendPair(responsePairsOf(&appended), []byte("X-Upstream-Request-Id"), []byte("req_2"))
	if got, want := string(appended.Header()), string(set.Header()); got != want {
		t.Errorf("after a reset, appended:\n%s\nset:\n%s", got, want)
	}
	var req fasthttp.RequestHeader
	appendPair(requestPairsOf(&req), []byte("Accept"), []byte("application/json"))
	if got := string(req.Peek("Accept")); got != "application/json" {
		t.Errorf("request's Accept %q", got)
	}
	for _, name := range []string{"Content-Type", "Content-Length", "Server", "Set-Cookie", "Date", "Connection", "Transfer-Encoding", "Trailer"} {
		if plainName([]byte(name)) {
			t.Errorf("%s is taken for a plain header", name)
		}
	}
	for name, s := range registry {
		if !s.appendsPassed {
			t.Errorf("%s: its passed headers are set, not appended", name)
		}
	}
	if !requestAppends {
		t.Error("the headers of an upstream request are set, not appended")
	}
	if !styleResponses.appendsPassed {
		t.Error("responses: its passed headers are set, not appended")
	}
}

// TestCanonicalReaderPeek: a header is found in any case, among the
// pairs or among the special headers fasthttp holds apart.
func TestCanonicalReaderPeek(t *testing.T) {
	var h fasthttp.ResponseHeader
	h.DisableNormalizing() // as the channel's client reads an answer
	h.SetContentType("application/json")
	h.SetServer("cloudflare")
	h.Set("x-request-id", "req_1")
	h.Set("X-Ratelimit-Remaining-Tokens", "9")
	f := func(name, want string) {
		t.Helper()
		if got := string(canonicalReader{&h}.Peek(name)); got != want {
			t.Errorf("Peek(%q) = %q, want %q", name, got, want)
		}
		fn := foldName(name)
		if got := string(findHeader(&h, &fn)); got != want {
			t.Errorf("findHeader(%q) = %q, want %q", name, got, want)
		}
	}
	f("X-Request-Id", "req_1")
	f("x-ratelimit-remaining-tokens", "9")
	f("Server", "cloudflare")
	f("Content-Type", "application/json")
	f("Retry-After", "")
	f("", "")
}

// TestFoldedNameMatches: a name matches in any case of its letters, and
// no other name does, whatever its length (the word loop and its last,
// overlapping word).
func TestFoldedNameMatches(t *testing.T) {
	f := func(name, k string, want bool) {
		t.Helper()
		fn := foldName(name)
		if got := fn.matches([]byte(k)); got != want {
			t.Errorf("%q matches %q: %t, want %t", name, k, got, want)
		}
	}
	for _, name := range []string{"Ab", "X-Request-Id", "Openai-Processing-Ms", "X-Ratelimit-Reset-Requests", "Request-Id", "Via1234", "Abcdefgh", "Abcdefgh-Ijklmnop"} {
		f(name, name, true)
		f(name, strings.ToLower(name), true)
		f(name, strings.ToUpper(name), true)
		f(name, name+"x", false)
		f(name, name[1:], false)
		for i := range len(name) {
			b := []byte(name)
			b[i] ^= 0x20 // a letter's other case; another byte altogether for the rest
			isLetter := 'a' <= name[i]|0x20 && name[i]|0x20 <= 'z'
			f(name, string(b), isLetter)
			b[i] = name[i] + 1
			f(name, string(b), false)
		}
	}
	f("X-Request-Id", "X\rRequest-Id", false) // '-' and '\r' differ by 0x20
}
