package proxy_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http/httputil"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/proxy"
)

var updateWireHeaders = flag.Bool("update-wire-headers", false, "rewrite testdata/wire_headers.golden")

// wireHeaders are the headers each provider's upstream sends with a
// successful answer, in the order it sends them: api.openai.com's with a
// chat completion (and what the bench mock adds of them, and one of them
// again), Anthropic's and Gemini's, each with what must not reach a
// client.
var wireHeaders = map[string][][2]string{
	"openai": append(slices.Clone(proxy.OpenAIHeaders),
		[2]string{"Set-Cookie", "__cf_bm=upstream-secret; path=/; HttpOnly"},
		[2]string{"Access-Control-Expose-Headers", "X-Request-ID"},
		[2]string{"X-Envoy-Upstream-Service-Time", "415"},
		[2]string{"Server", "cloudflare"},
		[2]string{"Cf-Ray", "8f3a2b1c4d5e6f70-FRA"},
		[2]string{"X-Ratelimit-Remaining-Tokens", "149999000"}, // a header sent twice: the last one wins
	),
	"anthropic": {
		{"Anthropic-Ratelimit-Requests-Limit", "4000"},
		{"Anthropic-Ratelimit-Requests-Remaining", "3999"},
		{"Anthropic-Ratelimit-Requests-Reset", "2099-01-01T00:00:00Z"},
		{"Anthropic-Ratelimit-Input-Tokens-Limit", "400000"},
		{"Anthropic-Ratelimit-Input-Tokens-Remaining", "399000"},
		{"Anthropic-Ratelimit-Tokens-Limit", "480000"},
		{"Anthropic-Ratelimit-Tokens-Remaining", "479000"},
		{"Anthropic-Ratelimit-Tokens-Reset", "2099-01-01T00:00:00Z"},
		{"Request-Id", "req_011CSHoEeqs5C35K2UUqR7Fy"},
		{"Anthropic-Organization-Id", "upstream-secret-org"},
		{"Via", "1.1 google"},
		{"Cf-Cache-Status", "DYNAMIC"},
		{"X-Robots-Tag", "none"},
		{"Server", "cloudflare"},
		{"Cf-Ray", "8f3a2b1c4d5e6f71-FRA"},
	},
	"gemini": {
		{"Vary", "Origin, X-Origin, Referer"},
		{"X-Xss-Protection", "0"},
		{"X-Frame-Options", "SAMEORIGIN"},
		{"X-Content-Type-Options", "nosniff"},
		{"Server-Timing", "gfet4t7; dur=812"},
		{"Server", "scaffolding on HTTPServer2"},
		{"Alt-Svc", `h3=":443"; ma=2592000,h3-29=":443"; ma=2592000`},
	},
	"cohere": {
		{"Access-Control-Expose-Headers", "X-Debug-Trace-Id"},
		{"Cache-Control", "no-cache, no-store, no-transform, must-revalidate, private, max-age=0"},
		{"Expires", "Thu, 01 Jan 1970 00:00:00 UTC"},
		{"Pragma", "no-cache"},
		{"Vary", "Origin"},
		{"X-Accel-Expires", "0"},
		{"X-Debug-Trace-Id", "8d3c2f1e0b9a8c7d6e5f4a3b2c1d0e9f"},
		{"X-Endpoint-Monthly-Call-Limit", "1000"},
		{"X-Trial-Endpoint-Call-Limit", "10"},
		{"X-Trial-Endpoint-Call-Remaining", "9"},
		{"Num_chars", "4271"},
		{"Num_tokens", "38"},
		{"Via", "1.1 google"},
		{"Server", "envoy"},
	},
}

// The client's whole raw response header (names, their order, values) and
// the upstream request's, for every client style, channel type, mode,
// spelling of the upstream's names, and keys with no limits, limits of
// their own, or limits on the model alone, are those in testdata/wire_headers.golden: what the gateway passes
// of an upstream's headers, and how it sets them, stays byte for byte what
// it was when the file was written (but for the values that change at
// every request: dates, the gateway's request id, resets counted from now,
// the mock's port).
func TestWireHeaders(t *testing.T) {
	if os.Getenv(proxy.NoPairViewEnv) != "" && proxy.PairView() {
		t.Fatal("the view of fasthttp's header pairs is on in the run that should go without it")
	}
	var got bytes.Buffer
	for _, spelling := range []string{"canonical", "lower"} {
		for _, typ := range []string{"openai", "anthropic", "gemini"} {
			up := startChatWireMock(t, typ, spellings[spelling])
			open := startGateway(t, faultChannels(typ, "talky", up.url))
			for _, cl := range mappingClients() {
				for _, key := range []string{openKey, limitedKey, talkyKey} {
					tg := open
					if key == limitedKey {
						if cl.mode == "stream_array" {
							continue
						}
						tg = startGateway(t, faultChannels(typ, "talky", up.url)) // a fresh count for the key's 2 rpm
					}
					name := fmt.Sprintf("%s/%s_client/%s_channel/%s/%s", spelling, cl.style, typ, cl.mode, strings.Split(key, "-")[1])
					wireRow(t, &got, name, tg, up, cl, key)
				}
			}
		}
	}
	moreWireRows(t, &got)
	const golden = "testdata/wire_headers.golden"
	if *updateWireHeaders {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("line %d: got %q, want %q", i+1, g[i], w[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(g), len(w))
	}
}

// TestWireHeadersWithoutPairView: with no view of fasthttp's header pairs
// (a fasthttp that lays them out otherwise), every header set through
// fasthttp's setters and searched through its All, the gateway writes the
// same bytes: TestWireHeaders, in a test binary of its own whose view is
// off from its start.
func TestWireHeadersWithoutPairView(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWireHeaders$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), proxy.NoPairViewEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestWireHeaders ")) {
		t.Fatalf("TestWireHeaders without the view: %v\n%s", err, out)
	}
}

// moreWireRows are TestWireHeaders' rows past the chat clients: a
// Responses client on each channel type, a client that sends its own
// X-Request-Id, a rerank on a cohere channel (its passed id
// X-Debug-Trace-Id) and every chat client on the demo channel, which has
// no upstream request on the wire. (An OpenAI channel relays the
// Responses API as it is: the mock's chat answer passes as the answer,
// with its headers.)
func moreWireRows(t *testing.T, got *bytes.Buffer) {
	for _, typ := range []string{"openai", "anthropic", "gemini"} {
		up := startChatWireMock(t, typ, spellings["canonical"])
		tg := startGateway(t, faultChannels(typ, "talky", up.url))
		for _, cl := range responsesClients() {
			wireRow(t, got, fmt.Sprintf("canonical/responses_client/%s_channel/%s/open", typ, cl.mode), tg, up, cl, openKey)
		}
		if typ == "openai" {
			for _, cl := range mappingClients()[:2] {
				cl.header = maps.Clone(cl.header)
				cl.header["X-Request-Id"] = "client-trace-7"
				wireRow(t, got, "canonical/openai_client/openai_channel/"+cl.mode+"/own_request_id", tg, up, cl, openKey)
			}
		}
	}
	co := startWireMock(t, wireHeaders["cohere"], spellings["canonical"], fixture(t, "cohere_rerank_response.json"), nil)
	rerank := mappingClient{style: "openai", mode: "rerank", path: func(string) string { return "/v1/rerank" },
		header: map[string]string{"Authorization": "Bearer " + openKey},
		body: func(alias string) string {
			return strings.Replace(rerankBody, `"gpt-rerank"`, strconv.Quote(alias), 1)
		}}
	wireRow(t, got, "canonical/openai_client/cohere_channel/rerank/open", startGateway(t, faultChannels("cohere", "talky", co.url)), co, rerank, openKey)
	demo := startGateway(t, "  - {name: demo, type: demo, models: [talky], pace: 1ms}\n")
	for _, cl := range append(mappingClients(), responsesClients()...) {
		wireRow(t, got, fmt.Sprintf("demo/%s_client/demo_channel/%s/open", cl.style, cl.mode), demo, nil, cl, openKey)
	}
}

// responsesClients are a Responses API client's requests, whole and
// streamed.
func responsesClients() []mappingClient {
	body := func(stream bool) func(string) string {
		return func(alias string) string { return fmt.Sprintf(`{"model":%q,"stream":%t,"input":"Hi"}`, alias, stream) }
	}
	var cls []mappingClient
	for _, stream := range []bool{false, true} {
		cls = append(cls, mappingClient{style: "responses", mode: map[bool]string{false: "non_stream", true: "stream"}[stream],
			path: func(string) string { return "/v1/responses" }, header: map[string]string{"Authorization": "Bearer " + openKey},
			body: body(stream)})
	}
	return cls
}

// wireRow writes the row name of TestWireHeaders: cl's answer's header
// from tg with key, and the header of the request up got (none without
// up), masked.
func wireRow(t *testing.T, got *bytes.Buffer, name string, tg *testGateway, up *wireMock, cl mappingClient, key string) {
	lines := wireExchange(t, tg, cl, key)
	id := headerValue(lines, "X-Request-Id")
	sent := cl.header["X-Request-Id"]
	fmt.Fprintf(got, "=== %s\n%s", name, maskHead(lines, func(v string) string {
		if v == sent {
			return v // the client's own id, kept
		}
		return "<id>"
	}))
	if up == nil {
		return
	}
	fmt.Fprintf(got, "--- upstream request\n%s", maskHead(up.lastHead(t), func(v string) string {
		if v == id {
			return "<same>" // the id the client was answered with
		}
		return "<other>"
	}))
}

// headerValue is the value of the first of a raw header's lines named
// name, in any case.
func headerValue(lines []string, name string) string {
	for _, line := range lines {
		if k, v, _ := strings.Cut(line, ": "); strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// wireExchange sends cl's request with key on a connection of its own and
// returns its answer's raw header's lines.
func wireExchange(t *testing.T, tg *testGateway, cl mappingClient, key string) []string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := cl.body("talky")
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: gw\r\nUser-Agent: wire-test\r\nContent-Type: application/json\r\n", cl.path("talky"))
	for _, k := range slices.Sorted(maps.Keys(cl.header)) {
		fmt.Fprintf(&req, "%s: %s\r\n", k, strings.Replace(cl.header[k], openKey, key, 1))
	}
	fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	lines, length, chunked := readHead(t, r)
	if !strings.HasPrefix(lines[0], "HTTP/1.1 200 ") {
		t.Fatalf("%s: %q", cl.path("talky"), lines)
	}
	var br io.Reader = io.LimitReader(r, int64(length))
	if chunked {
		br = httputil.NewChunkedReader(r)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatal(err)
	}
	return lines
}

// readHead reads a raw HTTP header from r: its lines, and how its body is
// framed.
func readHead(t *testing.T, r *bufio.Reader) (lines []string, length int, chunked bool) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("cannot read a header: %v (after %q)", err, lines)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			return lines, length, chunked
		}
		lines = append(lines, line)
		name, value, _ := strings.Cut(line, ": ")
		switch strings.ToLower(name) {
		case "content-length":
			length, _ = strconv.Atoi(value)
		case "transfer-encoding":
			chunked = value == "chunked"
		}
	}
}

// maskHead joins a header's lines, the values that change at every
// request masked: the date, the mock's address, a reset the gateway
// counts from now (not one passed as the upstream sent it), and the
// request id, as maskID says (the gateway's, and whether the upstream got
// the one the client did).
func maskHead(lines []string, maskID func(string) string) string {
	var b strings.Builder
	for _, line := range lines {
		name, value, _ := strings.Cut(line, ": ")
		switch l := strings.ToLower(name); {
		case l == "x-request-id":
			value = maskID(value)
		case l == "date" || l == "host":
			value = "*"
		case strings.Contains(l, "reset") && !passedAsSent(l, value):
			value = "*"
		}
		if name != line {
			line = name + ": " + value
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// passedAsSent reports whether a reset header, its name lowercased, is one
// an upstream of wireHeaders sent, name and value: a value alone could be
// the gateway's own reset when it happens to count down to the same text
// ("0s").
func passedAsSent(name, v string) bool {
	for _, hs := range wireHeaders {
		for _, h := range hs {
			if h[1] == v && strings.EqualFold(h[0], name) {
				return true
			}
		}
	}
	return false
}

// wireMock is an upstream on a loopback port that answers every request
// with an answer of its provider's (whole, or streamed when the request
// asks for a stream) and its headers, names spelled by spell, and
// records each request's raw header.
type wireMock struct {
	url  string
	head chan []string
}

// startChatWireMock is a wireMock of channel type typ's chat API and
// wireHeaders.
func startChatWireMock(t *testing.T, typ string, spell func(string) string) *wireMock {
	return startWireMock(t, wireHeaders[typ], spell, wireWhole(t, typ), chunks(wireStream(t, typ)))
}

func startWireMock(t *testing.T, headers [][2]string, spell func(string) string, whole, stream []byte) *wireMock {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var head strings.Builder
	for _, h := range headers {
		fmt.Fprintf(&head, "%s: %s\r\n", spell(h[0]), h[1])
	}
	m := &wireMock{url: "http://" + ln.Addr().String(), head: make(chan []string, 1)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go m.serve(conn, head.String(), whole, stream)
		}
	}()
	return m
}

func (m *wireMock) serve(conn net.Conn, head string, whole, stream []byte) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		var lines []string
		length := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\r\n")
			if line == "" {
				break
			}
			lines = append(lines, line)
			if name, value, _ := strings.Cut(line, ": "); strings.EqualFold(name, "Content-Length") {
				length, _ = strconv.Atoi(value)
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		m.head <- lines
		var err error
		if bytes.Contains(body, []byte(`"stream":true`)) || strings.Contains(lines[0], ":stream") {
			_, err = fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\n%sContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%s0\r\n\r\n", head, stream)
		} else {
			_, err = fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", head, len(whole), whole)
		}
		if err != nil {
			return
		}
	}
}

// lastHead is the raw header's lines of the request the mock served last.
func (m *wireMock) lastHead(t *testing.T) []string {
	t.Helper()
	select {
	case lines := <-m.head:
		return lines
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream got no request in 10 s")
		return nil
	}
}
