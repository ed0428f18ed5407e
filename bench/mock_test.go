package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMockChunksAsOpenAI checks that the mock's stream chunks are shaped as
// api.openai.com's: valid JSON, "usage":null on every chunk but the usage
// chunk when include_usage is set and on none otherwise, and an obfuscation
// string of 2 to 14 characters last, of more than one length in a stream.
func TestMockChunksAsOpenAI(t *testing.T) {
	r := renderReply("gpt-4o-mini", 20)
	for _, c := range []struct {
		evs     [][]byte
		withUse bool
	}{{r.events, false}, {r.eventsUse, true}} {
		lengths := map[int]bool{}
		for _, ev := range c.evs[:len(c.evs)-1] {
			data := bytes.TrimSuffix(bytes.TrimPrefix(ev, []byte("data: ")), []byte("\n\n"))
			var chunk struct {
				Usage       json.RawMessage `json:"usage"`
				Obfuscation string          `json:"obfuscation"`
			}
			if err := json.Unmarshal(data, &chunk); err != nil {
				t.Fatalf("chunk %s: %v", data, err)
			}
			usageChunk := len(chunk.Usage) > 0 && chunk.Usage[0] == '{'
			if nullUsage := string(chunk.Usage) == "null"; !usageChunk && nullUsage != c.withUse {
				t.Errorf("include_usage %v, chunk %s", c.withUse, data)
			}
			n := len(chunk.Obfuscation)
			if n < 2 || n > 14 || !bytes.HasSuffix(data, []byte(`,"obfuscation":"`+chunk.Obfuscation+`"}`)) {
				t.Errorf("chunk does not end with an obfuscation string of 2 to 14 characters: %s", data)
			}
			lengths[n] = true
		}
		if len(lengths) < 2 {
			t.Errorf("include_usage %v: every obfuscation string is as long: %v", c.withUse, lengths)
		}
	}
}

// TestMockServersAnswerAlike sends the same requests, on one kept-alive
// raw TCP connection, to the mock on fasthttp and on net/http, and checks
// that they answer the same bytes: the status line, every header line
// (spelling and value; the Date's value aside, and the lines' order, which
// net/http sorts), and the body as it is framed on the wire (Content-Length,
// or the chunks of a stream, one per event: the events come 20 ms apart, so
// that fasthttp, which frames whatever its stream writer has flushed by the
// time it reads, has one).
func TestMockServersAnswerAlike(t *testing.T) {
	cases := []struct{ name, method, path, auth, body string }{
		{"whole answer", "POST", "/v1/chat/completions", upstreamKey, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`},
		{"stream", "POST", "/v1/chat/completions", upstreamKey,
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}`},
		{"embeddings", "POST", "/v1/embeddings", upstreamKey, `{"model":"text-embedding-3-small","input":"Hi"}`},
		{"404", "GET", "/v1/models", upstreamKey, ""},
		{"401", "POST", "/v1/chat/completions", "sk-wrong", `{"model":"gpt-4o-mini","messages":[]}`},
	}
	answers := map[string][][]byte{}
	for _, server := range mockServers {
		m, err := startMock(server, 3, 20*time.Millisecond, upstreamKey)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", m.addr)
		if err != nil {
			m.close()
			t.Fatal(err)
		}
		r := bufio.NewReader(conn)
		for _, c := range cases {
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				c.method, c.path, m.addr, c.auth, len(c.body), c.body)
			conn.SetReadDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck
			raw, err := readRawResponse(r)
			if err != nil {
				t.Fatalf("%s mock, %s: %v; read so far:\n%q", server, c.name, err, raw)
			}
			answers[server] = append(answers[server], raw)
		}
		conn.Close()
		m.close()
	}
	for i, c := range cases {
		fast, std := answers["fasthttp"][i], answers["nethttp"][i]
		a, b := sameOrderNoDate(t, fast), sameOrderNoDate(t, std)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the mocks answer differently\nfasthttp: %q\nnethttp:  %q", c.name, fast, std)
		}
	}
	// What the comparison rests on: the answers are what each case asks for.
	for i, want := range []string{"200 OK", "200 OK", "200 OK", "404 Not Found", "401 Unauthorized"} {
		if got := answers["nethttp"][i]; !bytes.HasPrefix(got, []byte("HTTP/1.1 "+want+"\r\n")) {
			t.Errorf("%s: answer %.40q, want %s", cases[i].name, got, want)
		}
	}
	if stream := answers["nethttp"][1]; bytes.Count(stream, []byte("\r\ndata: ")) != 3+4 || !bytes.HasSuffix(stream, []byte("data: [DONE]\n\n\r\n0\r\n\r\n")) {
		t.Errorf("the stream is not 7 chunks of an event each (role, 3 deltas, finish, usage, [DONE]):\n%q", stream)
	}
}

// readRawResponse reads one HTTP/1.1 response as it came: its head, and
// its body framed by Content-Length or in chunks.
func readRawResponse(r *bufio.Reader) ([]byte, error) {
	var raw []byte
	line := func() (string, error) {
		s, err := r.ReadString('\n')
		raw = append(raw, s...)
		return s, err
	}
	length, chunked := -1, false
	for {
		s, err := line()
		if err != nil {
			return raw, err
		}
		if s == "\r\n" {
			break
		}
		name, value, _ := strings.Cut(strings.TrimSuffix(s, "\r\n"), ": ")
		switch strings.ToLower(name) {
		case "content-length":
			if length, err = strconv.Atoi(value); err != nil {
				return raw, err
			}
		case "transfer-encoding":
			chunked = value == "chunked"
		}
	}
	read := func(n int) error {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		raw = append(raw, b...)
		return err
	}
	if !chunked {
		if length < 0 {
			return raw, errors.New("neither Content-Length nor chunked")
		}
		return raw, read(length)
	}
	for {
		s, err := line()
		if err != nil {
			return raw, err
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "\r\n"), 16, 32)
		if err != nil {
			return raw, fmt.Errorf("chunk size %q: %w", s, err)
		}
		if err := read(int(n) + 2); err != nil { // the data and its CRLF, or the last chunk's empty trailer
			return raw, err
		}
		if n == 0 {
			return raw, nil
		}
	}
}

// sameOrderNoDate returns a raw response with its header lines sorted and
// its Date's value blanked, after checking that it has one Date, valid.
func sameOrderNoDate(t *testing.T, raw []byte) []byte {
	t.Helper()
	head, body, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	lines := strings.Split(string(head), "\r\n")
	dates := 0
	for i, l := range lines[1:] {
		if v, ok := strings.CutPrefix(l, "Date: "); ok {
			if _, err := http.ParseTime(v); err != nil {
				t.Errorf("Date %q: %v", v, err)
			}
			lines[i+1], dates = "Date: -", dates+1
		}
	}
	if dates != 1 {
		t.Errorf("%d Date headers in %q", dates, head)
	}
	slices.Sort(lines[1:])
	return slices.Concat([]byte(strings.Join(lines, "\r\n")), []byte("\r\n\r\n"), body)
}

// mockServerAt tells which server the mock at addr runs on, from the order
// of its 404's header lines: fasthttp writes Server first, net/http sorts
// them (Content-Length first).
func mockServerAt(t *testing.T, addr string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck
	fmt.Fprintf(conn, "GET /nowhere HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	raw, err := readRawResponse(bufio.NewReader(conn))
	if err != nil {
		t.Fatalf("the mock at %s: %v; read %q", addr, err, raw)
	}
	_, head, _ := strings.Cut(string(raw), "\r\n")
	switch {
	case strings.HasPrefix(head, "Server: "+mockServerName+"\r\n"):
		return "fasthttp"
	case strings.HasPrefix(head, "Content-Length: "):
		return "nethttp"
	}
	return fmt.Sprintf("neither: %q", raw)
}
