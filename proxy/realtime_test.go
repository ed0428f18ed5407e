package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// rtUpstream is an OpenAI-style realtime server on loopback: on connect it
// sends session.created with the model it was asked for; it answers
// session.update with session.updated, response.create with two text
// deltas and a response.done with usage, echoes binary messages, closes
// with 4000 "bye" on test.close and drops the connection without a close
// frame on test.drop. It records what it saw: the handshake's headers and
// model, the binary messages and the client events (but test.*).
type rtUpstream struct {
	srv   *httptest.Server
	dials atomic.Int64
	mu    sync.Mutex
	hdr   http.Header
	model string
	bins  [][]byte
	texts [][]byte
	end   error // the error its read loop ended with
	done  chan struct{}
}

func newRTUpstream(t *testing.T) *rtUpstream {
	u := &rtUpstream{done: make(chan struct{}, 16)}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.dials.Add(1)
		if r.URL.Path != "/v1/realtime" {
			http.Error(w, "not found", 404)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(-1)
		model := r.URL.Query().Get("model")
		u.mu.Lock()
		u.hdr, u.model = r.Header.Clone(), model
		u.mu.Unlock()
		ctx := context.Background()
		send := func(s string) { c.Write(ctx, websocket.MessageText, []byte(s)) }
		send(`{"type":"session.created","event_id":"ev_1","session":{"id":"sess_1","model":"` + model + `","voice":"alloy"}}`)
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				u.mu.Lock()
				u.end = err
				u.mu.Unlock()
				u.done <- struct{}{}
				return
			}
			if typ == websocket.MessageBinary {
				u.mu.Lock()
				u.bins = append(u.bins, msg)
				u.mu.Unlock()
				c.Write(ctx, websocket.MessageBinary, msg)
				continue
			}
			var ev struct{ Type string }
			json.Unmarshal(msg, &ev)
			if !strings.HasPrefix(ev.Type, "test.") {
				u.mu.Lock()
				u.texts = append(u.texts, msg)
				u.mu.Unlock()
			}
			switch ev.Type {
			case "session.update":
				send(`{"type":"session.updated","event_id":"ev_2","session":{"id":"sess_1","model":"` + model + `","instructions":"be brief"}}`)
			case "response.create":
				send(`{"type":"response.text.delta","delta":"Hel"}`)
				send(`{"type":"response.text.delta","delta":"lo"}`)
				send(`{"type":"response.done","event_id":"ev_3","response":{"id":"resp_1","status":"completed",` +
					`"usage":{"total_tokens":30,"input_tokens":20,"output_tokens":10,"input_token_details":{"cached_tokens":4,"text_tokens":20},"output_token_details":{"text_tokens":10}}}}`)
			case "test.close":
				c.Close(4000, "bye")
			case "test.drop":
				c.CloseNow()
			}
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *rtUpstream) seen() (http.Header, string, [][]byte, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hdr, u.model, u.bins, u.end
}

// events is the client events the upstream got, as it got them.
func (u *rtUpstream) events() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var evs []string
	for _, t := range u.texts {
		evs = append(evs, string(t))
	}
	return evs
}

// rowSink is a UsageSink that keeps the rows.
type rowSink struct {
	mu   sync.Mutex
	rows []store.Usage
}

func (r *rowSink) Record(u store.Usage) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, u)
	return true
}

func (r *rowSink) all() []store.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]store.Usage(nil), r.rows...)
}

// realtimeGateway serves "fast", mapped to gpt-4o-realtime on up,
// gpt-4o-mini-realtime unmapped, and "gpt-claude" on an anthropic channel only.
func realtimeGateway(t *testing.T, up *rtUpstream) (*testGateway, *rowSink) {
	return realtimeGatewayWith(t, up, "")
}

// realtimeGatewayWith is realtimeGateway with more settings of up's channel
// (YAML, such as "timeouts: {idle: 1s}").
func realtimeGatewayWith(t *testing.T, up *rtUpstream, extra string) (*testGateway, *rowSink) {
	rows := &rowSink{}
	tg := startGatewayWith(t, "  - {name: rt, type: openai, base_url: \""+up.srv.URL+"/v1\", api_keys: ["+upstreamKey+"], "+
		"models: [gpt-4o-mini-realtime], model_map: {fast: gpt-4o-realtime}, "+extra+"}\n"+
		"  - {name: an, type: anthropic, base_url: \"http://127.0.0.1:1\", api_keys: [k], models: [gpt-claude]}\n",
		proxy.Options{Usage: rows})
	return tg, rows
}

func dialRT(t *testing.T, tg *testGateway, model string, h http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(tg.url, "http")+"/v1/realtime?model="+model,
		&websocket.DialOptions{HTTPHeader: h})
	if c != nil {
		c.SetReadLimit(-1)
	}
	return c, resp, err
}

func bearerHeader(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}, "Openai-Beta": {"realtime=v1"}}
}

// readEvent reads a text message and its type.
func readEvent(t *testing.T, c *websocket.Conn) (string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	typ, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("a %v message, want text", typ)
	}
	var ev struct{ Type string }
	json.Unmarshal(msg, &ev)
	return ev.Type, msg
}

func write(t *testing.T, c *websocket.Conn, typ websocket.MessageType, msg string) {
	t.Helper()
	if err := c.Write(context.Background(), typ, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// readClose reads until the connection ends and returns its close error.
func readClose(t *testing.T, c *websocket.Conn) websocket.CloseError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("ended with %v, not a close frame", err)
			}
			return ce
		}
	}
}

// TestRealtimeSession: a session through the gateway with the official
// client library's WebSocket: the upstream gets the channel's key (never
// the client's), the client's OpenAI-Beta and the mapped model; the client
// sees the public model in session.created and session.updated, two text
// turns whose response.done usage adds up in one usage row and one access
// line, a binary frame both ways byte for byte, and its close code and
// reason reach the upstream. Goroutines go back to their count.
func TestRealtimeSession(t *testing.T) {
	up := newRTUpstream(t)
	tg, rows := realtimeGateway(t, up)
	before := warmUp(t, tg, up)

	c, resp, err := dialRT(t, tg, "fast", bearerHeader(clientKey))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("the upgrade answer has no X-Request-Id")
	}
	typ, msg := readEvent(t, c)
	if typ != "session.created" || !bytes.Contains(msg, []byte(`"model":"fast"`)) {
		t.Fatalf("first event %s", msg)
	}
	hdr, model, _, _ := up.seen()
	if model != "gpt-4o-realtime" || hdr.Get("Openai-Beta") != "realtime=v1" {
		t.Errorf("upstream got model %q, OpenAI-Beta %q", model, hdr.Get("Openai-Beta"))
	}
	checkUpstreamKey(t, hdr)

	write(t, c, websocket.MessageText, `{"type":"session.update","session":{"instructions":"be brief"}}`)
	if typ, msg := readEvent(t, c); typ != "session.updated" ||
		string(msg) != `{"type":"session.updated","event_id":"ev_2","session":{"id":"sess_1","model":"fast","instructions":"be brief"}}` {
		t.Fatalf("session.updated: %s", msg)
	}
	for turn := 0; turn < 2; turn++ {
		write(t, c, websocket.MessageText, `{"type":"response.create"}`)
		var text string
		for {
			typ, msg := readEvent(t, c)
			if typ == "response.done" {
				break
			}
			var d struct{ Delta string }
			json.Unmarshal(msg, &d)
			text += d.Delta
		}
		if text != "Hello" {
			t.Errorf("turn %d: text %q", turn, text)
		}
	}

	audio := make([]byte, 60000) // spans several frames of the gateway's buffers
	for i := range audio {
		audio[i] = byte(i*7 + i>>8)
	}
	if err := c.Write(context.Background(), websocket.MessageBinary, audio); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	bt, back, err := c.Read(ctx)
	if err != nil || bt != websocket.MessageBinary || !bytes.Equal(back, audio) {
		t.Fatalf("binary echo: %v %v, %d bytes, equal %v", err, bt, len(back), bytes.Equal(back, audio))
	}
	if _, _, bins, _ := up.seen(); len(bins) != 1 || !bytes.Equal(bins[0], audio) {
		t.Fatalf("the upstream got %d binary messages, not the client's bytes", len(bins))
	}

	if err := c.Close(websocket.StatusNormalClosure, "done for today"); err != nil {
		t.Errorf("close: %v", err)
	}
	<-up.done
	if _, _, _, end := up.seen(); websocket.CloseStatus(end) != websocket.StatusNormalClosure ||
		!strings.Contains(end.Error(), "done for today") {
		t.Errorf("upstream saw %v, want 1000 done for today", end)
	}

	waitFor(t, "the usage row", func() bool { return len(rows.all()) == 2 }) // the warm-up's, this one's
	r := rows.all()[1]
	if r.Model != "fast" || r.Channel != "rt" || r.Input != 40 || r.Output != 20 || r.Cached != 8 ||
		r.Status != 101 || r.KeyName != "client" || r.FirstToken <= 0 || r.Endpoint != "realtime" {
		t.Errorf("usage row %+v", r)
	}
	waitFor(t, "the access line", func() bool {
		for _, l := range tg.accessLines(t) {
			if l["endpoint"] == "realtime" && l["model"] == "fast" && l["channel"] == "rt" &&
				l["input_tokens"] == 40.0 && l["output_tokens"] == 20.0 && l["status"] == 101.0 {
				return true
			}
		}
		return false
	})
	waitGoroutines(t, before)
}

// TestRealtimeBrowserKey: a browser's key as the openai-insecure-api-key
// subprotocol opens the session; the gateway answers with the realtime
// subprotocol and never echoes the key; the upstream is offered no
// subprotocol (the key's least of all) and gets the channel's key and the
// beta subprotocol as OpenAI-Beta; the key is in no log line. A wrong key
// given so is a 401 before any dial.
func TestRealtimeBrowserKey(t *testing.T) {
	up := newRTUpstream(t)
	tg, _ := realtimeGateway(t, up)
	dial := func(key string) (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return websocket.Dial(ctx, "ws"+strings.TrimPrefix(tg.url, "http")+"/v1/realtime?model=fast",
			&websocket.DialOptions{Subprotocols: []string{"realtime", "openai-insecure-api-key." + key, "openai-beta.realtime-v1"}})
	}
	c, resp, err := dial(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "realtime" {
		t.Errorf("subprotocol %q", c.Subprotocol())
	}
	for k, vs := range resp.Header {
		if strings.Contains(strings.Join(vs, ","), clientKey) {
			t.Errorf("the answer's %s has the key", k)
		}
	}
	readEvent(t, c)
	hdr, _, _, _ := up.seen()
	checkUpstreamKey(t, hdr)
	if p := hdr.Values("Sec-Websocket-Protocol"); len(p) != 0 {
		t.Errorf("the upstream was offered subprotocols %q", p)
	}
	if hdr.Get("Openai-Beta") != "realtime=v1" {
		t.Errorf("OpenAI-Beta %q", hdr.Get("Openai-Beta"))
	}
	c.Close(websocket.StatusNormalClosure, "")
	<-up.done

	_, resp, err = dial("sk-wrong-0123456789")
	if err == nil || resp == nil {
		t.Fatalf("a wrong key: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	checkError(t, resp, body, 401, "invalid_api_key")
	if n := up.dials.Load(); n != 1 {
		t.Errorf("the upstream was dialed %d times, want once", n)
	}
	waitFor(t, "both access lines", func() bool { return len(tg.accessLines(t)) == 2 })
	if logs := tg.logs.String(); strings.Contains(logs, clientKey) || strings.Contains(logs, "sk-wrong-0123456789") {
		t.Errorf("a key is in the logs:\n%s", logs)
	}
}

// TestRealtimeRefused: a wrong key, a model the key may not use, a model
// of an anthropic channel only and an unknown model are plain HTTP errors
// in OpenAI's shape, before the upgrade and before any upstream dial.
func TestRealtimeRefused(t *testing.T) {
	up := newRTUpstream(t)
	tg, _ := realtimeGateway(t, up)
	for _, tc := range []struct {
		key, model string
		status     int
		code       string
	}{
		{"sk-wrong-0123456789", "fast", 401, "invalid_api_key"},
		{"", "fast", 401, "missing_api_key"},
		{clientKey, "secret-model", 403, "model_not_allowed"},
		{openKey, "gpt-claude", 503, "endpoint_not_served"},
		{openKey, "nope", 503, "model_not_found"},
	} {
		h := http.Header{}
		if tc.key != "" {
			h = bearerHeader(tc.key)
		}
		c, resp, err := dialRT(t, tg, tc.model, h)
		if err == nil {
			c.CloseNow()
			t.Fatalf("%s/%s: upgraded", tc.key, tc.model)
		}
		if resp == nil {
			t.Fatalf("%s/%s: %v", tc.key, tc.model, err)
		}
		body := new(bytes.Buffer)
		body.ReadFrom(resp.Body)
		checkError(t, resp, body.Bytes(), tc.status, tc.code)
		if tc.code == "endpoint_not_served" && !strings.Contains(body.String(), "realtime") {
			t.Errorf("503 does not name realtime: %s", body)
		}
	}
	if n := up.dials.Load(); n != 0 {
		t.Errorf("the upstream was dialed %d times", n)
	}
}

// TestRealtimeCloses: an upstream's close code and reason reach the
// client; an upstream that drops without a close frame closes the client
// with 1011; a client that drops has the upstream closed within a second;
// a message over server.max_ws_message (64KiB here) closes the session
// with 1009 both ways, and is not relayed.
func TestRealtimeCloses(t *testing.T) {
	up := newRTUpstream(t)
	tg, _ := realtimeGateway(t, up)
	before := warmUp(t, tg, up)

	c := openRT(t, tg)
	write(t, c, websocket.MessageText, `{"type":"test.close"}`)
	if ce := readClose(t, c); ce.Code != 4000 || ce.Reason != "bye" {
		t.Errorf("client saw %v, want 4000 bye", ce)
	}
	<-up.done
	waitGoroutines(t, before)

	c = openRT(t, tg)
	write(t, c, websocket.MessageText, `{"type":"test.drop"}`)
	if ce := readClose(t, c); ce.Code != websocket.StatusInternalError {
		t.Errorf("client saw %v, want 1011", ce)
	}
	<-up.done
	waitGoroutines(t, before)

	c = openRT(t, tg)
	c.CloseNow()
	select {
	case <-up.done:
	case <-time.After(time.Second):
		t.Fatal("the upstream is still open a second after the client dropped")
	}
	waitGoroutines(t, before)

	c = openRT(t, tg)
	c.Write(context.Background(), websocket.MessageBinary, bytes.Repeat([]byte("x"), 64<<10+1))
	if ce := readClose(t, c); ce.Code != websocket.StatusMessageTooBig {
		t.Errorf("client saw %v, want 1009", ce)
	}
	<-up.done
	if _, _, bins, end := up.seen(); len(bins) != 0 || websocket.CloseStatus(end) != websocket.StatusMessageTooBig {
		t.Errorf("upstream got %d binary messages and %v, want none and 1009", len(bins), end)
	}
	waitGoroutines(t, before)
}

// TestRealtimeShutdown: Shutdown lets open sessions run until its
// deadline, then closes them with 1001 both ways; each has its usage row
// when it returns, and no goroutine or connection of theirs is left.
func TestRealtimeShutdown(t *testing.T) {
	up := newRTUpstream(t)
	tg, rows := realtimeGateway(t, up)
	before := warmUp(t, tg, up)
	clients := []*websocket.Conn{openRT(t, tg), openRT(t, tg)}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- tg.g.Shutdown(ctx) }()
	for _, c := range clients {
		if ce := readClose(t, c); ce.Code != websocket.StatusGoingAway {
			t.Errorf("client saw %v, want 1001", ce)
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("closed after %v, before the shutdown deadline", d)
		}
		<-up.done
		if _, _, _, end := up.seen(); websocket.CloseStatus(end) != websocket.StatusGoingAway {
			t.Errorf("upstream saw %v, want 1001", end)
		}
	}
	if err := <-shut; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v", err)
	}
	if n := len(rows.all()); n != 3 { // the warm-up's and the two sessions'
		t.Errorf("%d usage rows after Shutdown, want 3", n)
	}
	if before.files >= 0 {
		before.files-- // the gateway's listener is closed too
	}
	waitGoroutines(t, before)
}

// baseline is what a test's process has open between sessions.
type baseline struct {
	goroutines int
	files      int // open file descriptors (sockets among them); -1 where /proc does not tell
}

// warmUp opens and closes a session, so that the servers' own goroutines
// (fasthttp's worker pool, its date clock) are running, and returns the
// goroutines and files open then. The garbage collector is off until the
// test ends: a connection left open but unreachable would be closed by
// its finalizer, out of the count's sight. up is nil for a demo channel.
func warmUp(t *testing.T, tg *testGateway, up *rtUpstream) baseline {
	t.Helper()
	gc := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(gc) })
	c := openRT(t, tg)
	c.Close(websocket.StatusNormalClosure, "")
	if up != nil {
		<-up.done
	}
	var n, left int
	waitFor(t, "the warm-up session's end", func() bool { n, left = goroutines(); return left == 0 })
	return baseline{n, openFiles()}
}

// waitGoroutines waits until no goroutine of a session is left (its pumps,
// either WebSocket library's, the mock's handlers), the goroutine count is
// back to before, and so is the count of open files: every connection of
// the sessions since, on both sides of the gateway, is closed.
func waitGoroutines(t *testing.T, before baseline) {
	t.Helper()
	waitFor(t, fmt.Sprintf("goroutines back to %d, files to %d", before.goroutines, before.files), func() bool {
		n, left := goroutines()
		return left == 0 && n <= before.goroutines && openFiles() <= before.files
	})
}

// stacks holds the goroutines' stacks as goroutines reads them (once
// allocated, as the garbage collector may be off meanwhile).
var stacks = make([]byte, 1<<20)

// openFiles counts the process's open file descriptors, -1 where /proc
// does not list them.
func openFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

// goroutines counts the goroutines but for the idle workers fasthttp keeps
// for 10 seconds, and those of realtime sessions (the demo's too).
func goroutines() (n, sessions int) {
	buf := stacks[:runtime.Stack(stacks, true)]
	for st := range strings.SplitSeq(string(buf), "\n\n") {
		switch {
		case strings.Contains(st, "fasthttp.(*workerPool).workerFunc"):
			continue
		case strings.Contains(st, "proxy.(*session)") || strings.Contains(st, "proxy.(*demoSession)") ||
			strings.Contains(st, "websocket.") || strings.Contains(st, "newRTUpstream"):
			sessions++
		}
		n++
	}
	return n, sessions
}

// openRT opens a session on "fast" with the client key and reads its
// session.created.
func openRT(t *testing.T, tg *testGateway) *websocket.Conn {
	t.Helper()
	c, _, err := dialRT(t, tg, "fast", bearerHeader(clientKey))
	if err != nil {
		t.Fatal(err)
	}
	readEvent(t, c)
	return c
}

// TestRealtimeDemo: a session on a demo channel, its model mapped, with
// no OpenAI-Beta (the GA's event names): session.created and
// session.updated show the public model, a user message is created, audio
// is ignored, and response.create streams the demo's reply a word a delta
// and ends with response.done, whose usage lands in the usage row and the
// access line. The client's close 1000 ends the session at once, with no
// error logged, and no goroutine is left (TestDemoRealtimeClose has the
// demo's answer to a close). With OpenAI-Beta: realtime=v1 the deltas are
// response.text.delta.
func TestRealtimeDemo(t *testing.T) {
	rows := &rowSink{}
	tg := startGatewayWith(t, "  - {name: demo, type: demo, model_map: {fast: demo-rt}, pace: 1ms}\n", proxy.Options{Usage: rows})
	before := warmUp(t, tg, nil)

	c, _, err := dialRT(t, tg, "fast", http.Header{"Authorization": {"Bearer " + clientKey}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if typ, msg := readEvent(t, c); typ != "session.created" ||
		!bytes.Contains(msg, []byte(`"model":"fast"`)) || !bytes.Contains(msg, []byte(`"id":"sess_demo"`)) {
		t.Fatalf("first event %s", msg)
	}
	write(t, c, websocket.MessageText, `{"type":"session.update","session":{"type":"realtime","instructions":"be brief"}}`)
	if typ, msg := readEvent(t, c); typ != "session.updated" ||
		!bytes.Contains(msg, []byte(`"instructions":"be brief"`)) || !bytes.Contains(msg, []byte(`"model":"fast"`)) {
		t.Fatalf("session.updated: %s", msg)
	}
	write(t, c, websocket.MessageText, `{"type":"conversation.item.create","item":{"type":"message","role":"user",`+
		`"content":[{"type":"input_text","text":"Hello there"}]}}`)
	if typ, msg := readEvent(t, c); typ != "conversation.item.created" ||
		!bytes.Contains(msg, []byte(`"role":"user"`)) || !bytes.Contains(msg, []byte(`"text":"Hello there"`)) {
		t.Fatalf("conversation.item.created: %s", msg)
	}
	write(t, c, websocket.MessageBinary, "\x00\x01audio")
	write(t, c, websocket.MessageText, `{"type":"input_audio_buffer.append","audio":"AAAA"}`)

	write(t, c, websocket.MessageText, `{"type":"response.create"}`)
	if typ, msg := readEvent(t, c); typ != "response.created" {
		t.Fatalf("after response.create: %s", msg) // not an answer to the audio
	}
	var text string
	deltas := 0
	for {
		typ, msg := readEvent(t, c)
		if typ != "response.output_text.delta" {
			var done struct{ Text string }
			json.Unmarshal(msg, &done)
			if typ != "response.output_text.done" || done.Text != text {
				t.Fatalf("after %d deltas: %s", deltas, msg)
			}
			break
		}
		var d struct{ Delta string }
		json.Unmarshal(msg, &d)
		text += d.Delta
		deltas++
	}
	if !strings.HasPrefix(text, "Hello from the Rosetta demo model. You said: \"Hello there\".") || deltas != len(strings.Fields(text)) {
		t.Errorf("%d deltas of %q", deltas, text)
	}
	typ, msg := readEvent(t, c)
	var done struct {
		Response struct {
			Status string
			Usage  struct {
				TotalTokens        int            `json:"total_tokens"`
				InputTokens        int            `json:"input_tokens"`
				OutputTokens       int            `json:"output_tokens"`
				InputTokenDetails  map[string]int `json:"input_token_details"`
				OutputTokenDetails map[string]int `json:"output_token_details"`
			}
		}
	}
	json.Unmarshal(msg, &done)
	u := done.Response.Usage
	in := len("Hello there") / 4 // the gateway's estimate of the message
	if typ != "response.done" || done.Response.Status != "completed" || u.InputTokens != in || u.OutputTokens != deltas ||
		u.TotalTokens != in+deltas || u.InputTokenDetails["text_tokens"] != in || u.OutputTokenDetails["text_tokens"] != deltas {
		t.Fatalf("response.done: %s", msg)
	}

	closed := time.Now()
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("close: %v", err)
	}
	waitFor(t, "the usage row", func() bool { return len(rows.all()) == 2 }) // the warm-up's, this one's
	if d := time.Since(closed); d > 500*time.Millisecond {
		t.Errorf("the session ended %v after the close: the demo did not answer it", d)
	}
	if r := rows.all()[1]; r.Model != "fast" || r.Channel != "demo" || r.Input != int64(in) || r.Output != int64(deltas) || r.Status != 101 {
		t.Errorf("usage row %+v", r)
	}
	waitFor(t, "the access line", func() bool {
		for _, l := range tg.accessLines(t) {
			if l["endpoint"] == "realtime" && l["model"] == "fast" && l["channel"] == "demo" && l["status"] == 101.0 &&
				l["input_tokens"] == float64(in) && l["output_tokens"] == float64(deltas) && l["error"] == nil {
				return true
			}
		}
		return false
	})
	waitGoroutines(t, before)

	c = openRT(t, tg) // with OpenAI-Beta: realtime=v1
	defer c.CloseNow()
	write(t, c, websocket.MessageText, `{"type":"response.create"}`)
	readEvent(t, c)
	if typ, msg := readEvent(t, c); typ != "response.text.delta" {
		t.Errorf("beta delta: %s", msg)
	}
}
