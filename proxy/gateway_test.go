package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
	"github.com/rosetta-gateway/rosetta/proxy"
)

const (
	clientKey   = "sk-client-0123456789abcdef"
	limitedKey  = "sk-limited-0123456789abcdef"
	openKey     = "sk-open-0123456789abcdef"    // every model, no limits
	modeledKey  = "sk-modeled-0123456789abcdef" // rpm 3, and 1 on gpt-4o-mini
	talkyKey    = "sk-talky-0123456789abcdef"   // rpm 1000 on talky alone
	upstreamKey = "sk-upstream-SECRET-0123456789"
)

// testGateway is a gateway serving on a loopback socket.
type testGateway struct {
	url  string
	g    *proxy.Gateway
	logs *syncBuffer
	done chan error
}

// startGateway serves the configuration; channels is the YAML of its
// channels list. Keys: clientKey may use every model but "secret-*",
// limitedKey has rpm 2.
func startGateway(t testing.TB, channels string) *testGateway {
	t.Helper()
	return startGatewayWith(t, channels, proxy.Options{})
}

// startGatewayWith is startGateway with options; their Log and AccessLog
// are replaced by ones tg.logs records.
func startGatewayWith(t testing.TB, channels string, opts proxy.Options) *testGateway {
	t.Helper()
	return startGatewayServer(t, "", channels, opts)
}

// startGatewayServer is startGatewayWith with more server settings, YAML
// lines indented by two spaces.
func startGatewayServer(t testing.TB, server, channels string, opts proxy.Options) *testGateway {
	t.Helper()
	yaml := fmt.Sprintf(`
server:
  max_body: 64KiB
  max_ws_message: 64KiB
  shutdown_timeout: 5s
%s
channels:
%s
keys:
  - {name: client, key: %s, models: ["gpt-*", "fast", "demo", "slow"]}
  - {name: limited, key: %s, rpm: 2}
  - {name: open, key: %s}
  - {name: modeled, key: %s, rpm: 3, model_limits: {gpt-4o-mini: {rpm: 1}}}
  - {name: talky, key: %s, model_limits: {talky: {rpm: 1000}}}
`, server, channels, clientKey, limitedKey, openKey, modeledKey, talkyKey)
	cfg, err := config.Parse([]byte(yaml), "test.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	opts.Log = slog.New(slog.NewJSONHandler(logs, nil))
	opts.AccessLog = logs
	g, err := proxy.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg := &testGateway{url: "http://" + ln.Addr().String(), g: g, logs: logs, done: make(chan error, 1)}
	go func() { tg.done <- g.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.Shutdown(ctx)
	})
	return tg
}

// channel is the YAML of one channel at url serving models.
func channel(name, url, extra string) string {
	return fmt.Sprintf("  - {name: %s, type: openai, base_url: %q, api_keys: [%s], models: [gpt-4o-mini], %s}\n",
		name, url, upstreamKey, extra)
}

// post sends a chat completion request with the client key.
func (tg *testGateway) post(t *testing.T, body string) (*http.Response, []byte) {
	t.Helper()
	return tg.do(t, "POST", "/v1/chat/completions", clientKey, body)
}

func (tg *testGateway) do(t *testing.T, method, path, key, body string) (*http.Response, []byte) {
	t.Helper()
	var header map[string]string
	if key != "" {
		header = map[string]string{"Authorization": "Bearer " + key}
	}
	return tg.send(t, method, path, header, body)
}

// send sends a JSON body to path with the given headers, and reads the
// whole answer.
func (tg *testGateway) send(t *testing.T, method, path string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, tg.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// checkError asserts an OpenAI-shaped error with the status and code.
func checkError(t *testing.T, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	var e struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		t.Fatalf("not an OpenAI error body: %s", body)
	}
	if e.Error.Message == "" || e.Error.Type == "" {
		t.Errorf("error without message or type: %s", body)
	}
	if code != "" && (e.Error.Code == nil || *e.Error.Code != code) {
		t.Errorf("code %v, want %q: %s", e.Error.Code, code, body)
	}
	if !bytes.Contains(body, []byte(`"param":`)) || !bytes.Contains(body, []byte(`"code":`)) {
		t.Errorf("param and code must be present (null when empty): %s", body)
	}
}

// syncBuffer is a log read while it is written.
type syncBuffer = testutil.Buffer

// accessLines returns the access-log entries written so far.
func (tg *testGateway) accessLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(tg.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRequestIDsOnOneConnection: on one kept-alive connection, each
// request's access line names the id its response carries, and a request
// that cannot be read, sent right behind another, gets an id of its own,
// not the one before's.
func TestRequestIDsOnOneConnection(t *testing.T) {
	tg := startGateway(t, channel("oa", closedPort(t), ""))
	conn, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	read := func() string {
		t.Helper()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // the id is in the header
		resp.Body.Close()
		return resp.Header.Get("X-Request-Id")
	}
	get := "GET /v1/models HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer " + clientKey + "\r\n\r\n"
	var ids []string
	for range 2 {
		if _, err := io.WriteString(conn, get); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, read())
	}
	// A health check (whose handler begins no exchange) and, behind it in
	// the same write, a request fasthttp cannot read.
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\nBAD\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, read(), read())
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			t.Fatalf("request ids %q: one missing or repeated", ids)
		}
		seen[id] = true
	}
	waitFor(t, "the access lines", func() bool { return len(tg.accessLines(t)) >= 3 })
	logged := map[string]bool{}
	for _, l := range tg.accessLines(t) {
		logged[fmt.Sprint(l["id"])] = true
	}
	for _, id := range []string{ids[0], ids[1], ids[3]} { // a health check logs no line
		if !logged[id] {
			t.Errorf("no access line names %q (lines: %v)", id, logged)
		}
	}
}
