package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// usageRows waits until the store holds n usage rows and returns them by
// request id.
func usageRows(t *testing.T, st store.Store, n int) map[string]store.Usage {
	t.Helper()
	var rows []store.Usage
	waitFor(t, fmt.Sprintf("%d usage rows", n), func() bool {
		var err error
		rows, err = st.Usage(context.Background(), store.UsageFilter{})
		return err == nil && len(rows) >= n
	})
	byID := map[string]store.Usage{}
	for _, r := range rows {
		byID[r.RequestID] = r
	}
	if len(rows) != n {
		t.Fatalf("%d usage rows, want %d: %+v", len(rows), n, rows)
	}
	return byID
}

func newUsageWriter(t *testing.T, st store.Store) *store.UsageWriter {
	w := store.NewUsageWriter(st, store.UsageWriterOptions{Interval: 10 * time.Millisecond})
	t.Cleanup(func() { w.Close(context.Background()) })
	return w
}

// checkUsage compares the fields of a row that a test can know.
func checkUsage(t *testing.T, got store.Usage, want store.Usage) {
	t.Helper()
	if got.Latency <= 0 || got.Time.IsZero() || (got.Status == 200 && got.FirstToken <= 0) || got.FirstToken > got.Latency {
		t.Errorf("row %s: latency %v, first token %v, time %v", got.RequestID, got.Latency, got.FirstToken, got.Time)
	}
	got.ID, got.Time, got.Latency, got.FirstToken = 0, time.Time{}, 0, 0
	if got.Attempts != nil {
		got.Attempts = timed(t, got.Attempts)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("usage row\n got %+v\nwant %+v", got, want)
	}
}

func TestUsageRows(t *testing.T) {
	st := openStore(t)
	evs := events(fixture(t, "chat_stream.sse"))
	ok := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Contains(body, []byte(`"stream":true`)) {
			streamReply(evs, 0)(w, r, body)
			return
		}
		jsonReply(200, fixture(t, "chat_response.json"))(w, r, body)
	})
	broken := newMock(t, jsonReply(500, []byte(`{"error":{"message":"boom","type":"server_error"}}`)))
	tg := startGatewayWith(t, channel("oa", ok.baseURL(), "")+
		`  - {name: broken, type: openai, base_url: "`+broken.baseURL()+`", api_keys: [k], models: [gpt-broken]}
`, proxy.Options{Store: st, Usage: newUsageWriter(t, st)})
	k := createKey(t, st, consoleKey, nil)

	id := func(resp *http.Response) string { return resp.Header.Get("X-Request-Id") }
	resp, body := tg.post(t, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	whole := id(resp)
	resp, body = tg.post(t, `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`)
	if resp.StatusCode != 200 || !bytes.HasSuffix(body, []byte("[DONE]\n\n")) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	stream := id(resp)
	resp, _ = tg.post(t, `{"model":"gpt-broken","messages":[{"role":"user","content":"Hi"}]}`)
	failed, failedStatus := id(resp), resp.StatusCode

	req, _ := http.NewRequest("POST", tg.url+"/v1/messages",
		strings.NewReader(`{"model":"gpt-4o-mini","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("x-api-key", consoleKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	aresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, aresp.Body)
	aresp.Body.Close()
	translated := id(aresp)

	// No key, or a model listing: no row.
	tg.do(t, "POST", "/v1/chat/completions", "", `{"model":"gpt-4o-mini","messages":[]}`)
	tg.do(t, "GET", "/v1/models", clientKey, "")

	rows := usageRows(t, st, 4)
	checkUsage(t, rows[whole], store.Usage{KeyName: "client", Model: "gpt-4o-mini", Channel: "oa", Status: 200,
		Input: 19, Output: 10, RequestID: whole, ClientStyle: "openai", Endpoint: "chat"})
	checkUsage(t, rows[stream], store.Usage{KeyName: "client", Model: "gpt-4o-mini", Channel: "oa", Status: 200,
		Input: 19, Output: 8, Cached: 3, Reasoning: 2, RequestID: stream, ClientStyle: "openai", Endpoint: "chat"})
	// The failed request's attempt is kept with its row, in the store.
	checkUsage(t, rows[failed], store.Usage{KeyName: "client", Model: "gpt-broken", Channel: "broken", Status: failedStatus,
		RequestID: failed, ClientStyle: "openai", Endpoint: "chat",
		Attempts: []store.Attempt{{Channel: "broken", Status: 500, Error: "HTTP 500: boom"}}})
	checkUsage(t, rows[translated], store.Usage{KeyID: k.ID, KeyName: k.Name, Model: "gpt-4o-mini", Channel: "oa", Status: 200,
		Input: 19, Output: 8, Cached: 3, Reasoning: 2, RequestID: translated, ClientStyle: "anthropic", Endpoint: "chat"})
	if failedStatus < 500 {
		t.Errorf("failed request answered %d", failedStatus)
	}
	waitFor(t, "the key's last use", func() bool {
		got, err := st.Key(context.Background(), k.ID)
		return err == nil && !got.LastUsed.IsZero()
	})
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{"rosetta_usage_rows_dropped_total 0", "rosetta_usage_rows_failed_total 0"} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// playgroundGateway serves a demo channel and, like the console's
// playground, POST /as/{key id}/{path} runs the gateway's API for path as
// the store's key.
func playgroundGateway(t *testing.T, st store.Store, channels string) *testGateway {
	var gw atomic.Pointer[proxy.Gateway]
	mount := func(r *router.Router) {
		r.POST("/as/{id}/{path:*}", func(ctx *fasthttp.RequestCtx) {
			id, _ := strconv.ParseInt(ctx.UserValue("id").(string), 10, 64)
			k, err := st.Key(context.Background(), id) // not ctx: fasthttp's RequestCtx.Done races with Server.Shutdown
			if err != nil {
				ctx.Error(err.Error(), 404)
				return
			}
			ctx.Request.SetRequestURI("/" + ctx.UserValue("path").(string))
			gw.Load().ServeAs(ctx, k)
		})
	}
	tg := startGatewayWith(t, channels, proxy.Options{Store: st, Usage: newUsageWriter(t, st), Mount: mount})
	gw.Store(tg.g)
	return tg
}

func TestServeAsStreamsADemoReply(t *testing.T) {
	st := openStore(t)
	tg := playgroundGateway(t, st, demoChannel)
	k := createKey(t, st, consoleKey, nil)
	path := fmt.Sprintf("/as/%d/v1/chat/completions", k.ID)

	resp, err := http.Post(tg.url+path, "application/json",
		strings.NewReader(`{"model":"demo","stream":true,"messages":[{"role":"user","content":"Hello playground"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		events++
		var chunk struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	if events < 10 || !strings.Contains(text.String(), "Hello from the Rosetta demo model") ||
		!strings.Contains(text.String(), "Hello playground") {
		t.Fatalf("%d events, text %q", events, text.String())
	}
	id := resp.Header.Get("X-Request-Id")
	row := usageRows(t, st, 1)[id]
	if row.KeyID != k.ID || row.Model != "demo" || row.Status != 200 || row.Output == 0 {
		t.Fatalf("usage row %+v", row)
	}
}

func TestServeAsIsANormalRequest(t *testing.T) {
	st := openStore(t)
	tg := playgroundGateway(t, st, demoChannel)
	k := createKey(t, st, consoleKey, func(k *store.Key) { k.Models = []string{"gpt-*"} })
	as := fmt.Sprintf("/as/%d", k.ID)

	resp, body := tg.do(t, "POST", as+"/v1/chat/completions", "", demoBody)
	checkError(t, resp, body, 403, "model_not_allowed")

	// The API only: the mounted routes are not reachable through ServeAs.
	resp, body = tg.do(t, "POST", as+as+"/v1/chat/completions", "", demoBody)
	checkError(t, resp, body, 404, "unknown_url")

	k.Enabled = false
	if err := st.UpdateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	resp, body = tg.do(t, "POST", as+"/v1/chat/completions", "", demoBody)
	checkError(t, resp, body, 401, "invalid_api_key")
}

// TestServeAsUpload: an upload made through ServeAs, whose body the
// calling route read whole, is served from that body as any upload is:
// the demo's transcript names its file and size.
func TestServeAsUpload(t *testing.T) {
	st := openStore(t)
	tg := playgroundGateway(t, st, demoChannel)
	k := createKey(t, st, consoleKey, nil)
	body, ct := uploadForm("file", 40<<10, "model", "demo")
	resp, b := tg.send(t, "POST", fmt.Sprintf("/as/%d/v1/audio/transcriptions", k.ID), map[string]string{"Content-Type": ct}, string(body))
	if resp.StatusCode != 200 || !strings.Contains(string(b), "of a.wav (40960 bytes)") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

func TestTestChannel(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	ok := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	denied := newMock(t, jsonReply(401, []byte(`{"error":{"message":"Incorrect API key provided: sk-up-***789","type":"invalid_request_error"}}`)))
	tg := startGatewayWith(t, demoChannel+channel("oa", ok.baseURL(), "")+
		`  - {name: denied, type: anthropic, base_url: "`+denied.srv.URL+`", api_keys: [k], models: [claude-x]}
`, proxy.Options{Store: st})

	if d, err := tg.g.TestChannel(ctx, "demo"); err != nil || d <= 0 {
		t.Fatalf("demo: %v, %v", d, err)
	}
	if d, err := tg.g.TestChannel(ctx, "oa"); err != nil || d <= 0 {
		t.Fatalf("oa: %v, %v", d, err)
	}
	if body := ok.lastRequest().body; !bytes.Contains(body, []byte(`"max_tokens":1`)) || !bytes.Contains(body, []byte(`"ping"`)) {
		t.Fatalf("test request: %s", body)
	}
	_, err := tg.g.TestChannel(ctx, "denied")
	if err == nil || !strings.Contains(err.Error(), "credentials") || strings.Contains(err.Error(), "sk-up") {
		t.Fatalf("denied: %v", err)
	}
	if got := denied.lastRequest(); got.path != "/v1/messages" || got.header.Get("x-api-key") != "k" {
		t.Fatalf("anthropic test request: %s %v", got.path, got.header)
	}
	if _, err := tg.g.TestChannel(ctx, "nope"); err == nil {
		t.Fatal("unknown channel: no error")
	}
	off := storeChannel("console-off", ok.baseURL(), func(c *store.Channel) { c.Enabled = false })
	if err := st.CreateChannel(ctx, off); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.g.TestChannel(ctx, "console-off"); err != nil {
		t.Fatalf("a disabled store channel: %v", err)
	}
	// A test counts as a request of its channel (issue 15): a channel
	// that fails its test must not look healthy.
	if got := findChannel(tg.g.Channels(), "oa"); got.Requests != 1 || got.ErrorRate != 0 || got.LastError != "" {
		t.Fatalf("oa after a test it passed: %+v", got)
	}
	if got := findChannel(tg.g.Channels(), "denied"); got.Requests != 1 || got.ErrorRate != 1 || !strings.Contains(got.LastError, "credentials") {
		t.Fatalf("denied after a test it failed: %+v", got)
	}
}

func TestModelsForAnAllowList(t *testing.T) {
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGateway(t, demoChannel+channel("oa", up.baseURL(), "")+channel("ob", up.baseURL(), "priority: 1"))
	got := tg.g.Models([]string{"gpt-*"})
	if len(got) != 1 || got[0].Name != "gpt-4o-mini" || len(got[0].Channels) != 2 ||
		got[0].Channels[0].Name != "oa" || got[0].Channels[1].Name != "ob" || got[0].Channels[0].State != "closed" {
		t.Fatalf("%+v", got)
	}
	if got := tg.g.Models([]string{"*"}); len(got) != 2 {
		t.Fatalf("every model: %+v", got)
	}
}
