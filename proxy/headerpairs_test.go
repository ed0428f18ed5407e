package proxy

import (
	"bufio"
	"encoding/binary"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// TestHeaderPairs: fasthttp's headers keep their pairs as headerPair is
// laid out (else every header is set through fasthttp's setters, slower),
// a pair appended writes what fasthttp's own setter writes, and every
// name the gateway appends is none of the special headers fasthttp holds
// apart (which the gateway takes for granted rather than checking each
// name at every start).
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
	for _, name := range appendedNames() {
		if !plainName(name) {
			t.Errorf("%s is appended to a header's pairs, but fasthttp does not keep it there as it is", name)
		}
	}
}

// appendedNames are the names the gateway appends to a header's pairs:
// every style's passed headers, on a client's answer, and the headers it
// sets on an upstream request (every style's credential and version,
// Accept, X-Request-Id).
func appendedNames() [][]byte {
	names := [][]byte{strAccept, strRequestID}
	for _, s := range append(slices.Collect(maps.Values(registry)), styleResponses) {
		for _, p := range s.passed {
			for ; p != nil; p = p.next {
				names = append(names, p.canonical)
			}
		}
		names = append(names, s.authHeader)
		if len(s.versionHeader) > 0 {
			names = append(names, s.versionHeader)
		}
	}
	return names
}

// plainName reports whether fasthttp keeps a header named name (spelled
// as it spells it) among its pairs, as it is, and nothing else, in a
// response's header and a request's: no special header (Content-Type,
// Connection, Date, Host and the like), which it holds apart, drops or
// lets change more of the header. Appending it to a header with some of
// each must leave what setting it leaves.
func plainName(name []byte) bool {
	var rs, ra fasthttp.ResponseHeader
	var qs, qa fasthttp.RequestHeader
	return plainIn(&rs, &ra, responsePairsOf(&ra), name) && plainIn(&qs, &qa, requestPairsOf(&qa), name)
}

// anyHeader is what plainIn asks of a request's or a response's header.
type anyHeader interface {
	SetContentType(string)
	SetConnectionClose()
	Set(name, value string)
	SetCanonical(name, value []byte)
	AppendBytes([]byte) []byte
	All() iter.Seq2[[]byte, []byte]
}

// plainIn is plainName for two new headers of one kind, pairs appended's.
func plainIn(set, appended anyHeader, pairs *[]headerPair, name []byte) bool {
	for _, h := range []anyHeader{set, appended} {
		h.SetContentType("text/x")
		h.SetConnectionClose()
		for _, n := range []string{"Set-Cookie", "Cookie", "Server", "User-Agent", "Host", "X-Before"} {
			h.Set(n, "s=1")
		}
	}
	set.SetCanonical(name, []byte("v"))
	appendPair(pairs, name, []byte("v"))
	return headerDump(set) == headerDump(appended)
}

// headerDump is what h writes and what it lists.
func headerDump(h anyHeader) string {
	b := h.AppendBytes(nil)
	for k, v := range h.All() {
		b = append(append(append(append(b, k...), ": "...), v...), '\n')
	}
	return string(b)
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
	for _, name := range []string{"Ab", "X-Request-Id", "Openai-Processing-Ms", "X-Ratelimit-Reset-Requests", "Request-Id", "Via1234", "Abcdefgh", "Abcdefgh-Ijklmnop",
		"Anthropic-Ratelimit-Requests-Remaining", strings.Repeat("Ab-1", 14) + "Z", strings.Repeat("Ab-1", maxFolded/4)} {
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
	f("", "", true)
	f("", "a", false)
	defer func() {
		if recover() == nil {
			t.Error("a name longer than maxFolded was folded")
		}
	}()
	foldName(strings.Repeat("a", maxFolded+1))
}

// TestPassedHeaderSlots: every style's passed headers are found by their
// names in any case, each alone in its slot of the style's table (one
// comparison a name), and a name with any one byte changed to any other
// value is not passed unless it is the same name in another case.
func TestPassedHeaderSlots(t *testing.T) {
	for _, s := range append(slices.Collect(maps.Values(registry)), styleResponses) {
		for slot, p := range s.passed {
			if p != nil && p.next != nil {
				t.Errorf("%s: slot %d holds %s and %s", s, slot, foldedString(&p.folded), foldedString(&p.next.folded))
			}
			for ; p != nil; p = p.next {
				name := foldedString(&p.folded)
				for _, k := range []string{name, strings.ToUpper(name)} {
					if got := s.passes([]byte(k)); got != p {
						t.Errorf("%s: %q passes as %v, want %s", s, k, got, p.canonical)
					}
				}
				for i := range len(name) {
					off := []byte(name)
					for v := range 256 {
						off[i] = byte(v)
						want := p
						if foldByte(off[i]) != foldByte(name[i]) {
							want = nil
						}
						if got := s.passes(off); got != want {
							t.Errorf("%s: %q passes: %t, want %t", s, off, got != nil, want != nil)
						}
					}
				}
			}
		}
	}
}

// TestPassedHeaderTwice: a dialect that passes a header twice, in any
// case, fails at once by name, rather than passing one of the two as the
// other says (the request id under its own name).
func TestPassedHeaderTwice(t *testing.T) {
	for _, passed := range [][]string{{"x-request-id"}, {"A-Passed-Header", "a-passed-header"}} {
		h := *styleOpenAI.http
		h.RequestIDHeader, h.PassedHeaders, h.Quota = "X-Request-Id", passed, nil
		msg := func() (msg any) {
			defer func() { msg = recover() }()
			newDialect(httpOf{openai.Dialect, &h})
			return nil
		}()
		if s, _ := msg.(string); !strings.Contains(s, "twice") || !strings.Contains(strings.ToLower(s), passed[len(passed)-1]) {
			t.Errorf("passing %q and the request id %s: panic %v, want one naming the header twice", passed, h.RequestIDHeader, msg)
		}
	}
}

// httpOf is a dialect with the HTTP of another.
type httpOf struct {
	codec.Dialect
	http *codec.HTTP
}

func (d httpOf) HTTP() *codec.HTTP { return d.http }

// foldByte is c in lower case when it is a letter.
func foldByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c | 0x20
	}
	return c
}

// foldedString is the name f was made of, in lower case.
func foldedString(f *foldedName) string {
	var b []byte
	if f.n < 8 {
		b = binary.LittleEndian.AppendUint64(nil, f.lower[0])
	}
	for j := range (f.n - 1) / 8 {
		b = binary.LittleEndian.AppendUint64(b, f.lower[j])
	}
	if f.n >= 8 {
		b = binary.LittleEndian.AppendUint64(b[:f.n-8], f.lower[lastWord])
	}
	return string(b[:f.n])
}

// TestPassSameStyleMovesValues: values passed to a client of the
// upstream's style move to the client's header with no storage shared: an
// answer read again into the upstream's header (which reuses its pairs'
// storage, the client header's old one among it) leaves the client's
// header as it was, and the next pass to the client's header, reset, takes
// the new values, answer after answer.
func TestPassSameStyleMovesValues(t *testing.T) {
	answer := func(n int) string {
		v := strings.Repeat(strconv.Itoa(n), n%7+1) // values of changing lengths
		return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n" +
			"openai-processing-ms: " + v + "\r\nx-ratelimit-limit-requests: 3" + v + "\r\n" +
			"x-request-id: req_" + v + "\r\nx-other: o" + v + "\r\n\r\n"
	}
	want := func(n int) map[string]string {
		v := strings.Repeat(strconv.Itoa(n), n%7+1)
		return map[string]string{"Openai-Processing-Ms": v, "X-Ratelimit-Limit-Requests": "3" + v,
			"X-Upstream-Request-Id": "req_" + v, "X-Other": ""}
	}
	read := func(up *fasthttp.ResponseHeader, n int) {
		up.Reset()
		up.DisableNormalizing() // as the channel's client reads
		if err := up.Read(bufio.NewReader(strings.NewReader(answer(n)))); err != nil {
			t.Fatal(err)
		}
	}
	check := func(h *fasthttp.ResponseHeader, n int, when string) {
		t.Helper()
		for k, v := range want(n) {
			if got := string(h.Peek(k)); got != v {
				t.Errorf("answer %d, %s: %s = %q, want %q", n, when, k, got, v)
			}
		}
	}
	x := &exchange{style: styleOpenAI, key: &Key{}}
	ch := &channel{style: styleOpenAI}
	var up, h fasthttp.ResponseHeader
	for n := 1; n <= 20; n++ {
		read(&up, n)
		h.Reset()
		passHeaders(&h, x, ch, &up)
		check(&h, n, "passed")
		read(&up, n+100) // the upstream's header reads on, into the storage it was given
		check(&h, n, "after the upstream's header read another answer")
	}
}

// TestSetResponse: setResponse leaves a response's header as SetCanonical
// does, whether the header holds the name already (a request served again
// in the process on the same response, ServeAs) or not, after other
// headers or none.
func TestSetResponse(t *testing.T) {
	for _, before := range [][][2]string{nil, {{"X-Other", "o"}}, {{"X-Request-Id", "req_outer"}},
		{{"X-Other", "o"}, {"X-Request-Id", "req_outer"}, {"X-More", "m"}}} {
		var set, ours fasthttp.ResponseHeader
		for _, h := range []*fasthttp.ResponseHeader{&set, &ours} {
			h.SetContentType("application/json")
			for _, kv := range before {
				h.Set(kv[0], kv[1])
			}
		}
		set.SetCanonical(strRequestID, []byte("req_inner"))
		setResponse(&ours, strRequestID, []byte("req_inner"))
		if got, want := headerDump(&ours), headerDump(&set); got != want {
			t.Errorf("after %v:\n%s\nwant (SetCanonical)\n%s", before, got, want)
		}
	}
}
