package proxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

const chatBody = `{"model":"fast","messages":[{"role":"user","content":"Hi"}],"temperature":0.2}`

func TestNonStreamPassThrough(t *testing.T) {
	want := fixture(t, "chat_response.json")
	up := newMock(t, jsonReply(200, want))
	tg := startGateway(t, channel("oa", up.baseURL(), `model_map: {fast: gpt-4o-mini}`))

	resp, body := tg.post(t, chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	// Byte for byte the upstream's answer, but for the public model name.
	expect := bytes.Replace(want, []byte(`"model": "gpt-4o-mini-2024-07-18"`), []byte(`"model": "fast"`), 1)
	if !bytes.Equal(body, expect) {
		t.Fatalf("response differs from the upstream's:\n%s\nwant\n%s", body, expect)
	}
	// The upstream got the client's body with only the model changed, and
	// the channel's key, never the client's.
	got := up.lastRequest()
	if wantReq := strings.Replace(chatBody, `"fast"`, `"gpt-4o-mini"`, 1); string(got.body) != wantReq {
		t.Errorf("upstream body %s, want %s", got.body, wantReq)
	}
	if a := got.header.Get("Authorization"); a != "Bearer "+upstreamKey {
		t.Errorf("upstream Authorization %q", a)
	}
	if got.path != "/v1/chat/completions" {
		t.Errorf("upstream path %q", got.path)
	}
	if id := resp.Header.Get("X-Request-Id"); id == "" || got.header.Get("X-Request-Id") != id {
		t.Errorf("request id %q not passed upstream (%q)", id, got.header.Get("X-Request-Id"))
	}
	for k, v := range got.header {
		if strings.Contains(strings.Join(v, " "), clientKey) {
			t.Errorf("client key forwarded upstream in %s", k)
		}
	}
	waitFor(t, "access log", func() bool { return len(tg.accessLines(t)) == 1 })
	line := tg.accessLines(t)[0]
	if line["input_tokens"] != 19.0 || line["output_tokens"] != 10.0 || line["channel"] != "oa" || line["model"] != "fast" {
		t.Errorf("access log %v", line)
	}
	if strings.Contains(tg.logs.String(), clientKey) || strings.Contains(tg.logs.String(), upstreamKey) {
		t.Error("a key reached the log")
	}
}

func TestStreamPassThrough(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	up := newMock(t, streamReply(evs, 0))
	tg := startGateway(t, channel("oa", up.baseURL(), `model_map: {fast: gpt-4o-mini}`))
	public := func(ev []byte) []byte {
		return bytes.Replace(ev, []byte(`"model":"gpt-4o-mini-2024-07-18"`), []byte(`"model":"fast"`), 1)
	}

	t.Run("client did not ask for usage", func(t *testing.T) {
		resp, body := tg.post(t, `{"model":"fast","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		// The gateway asked the upstream for usage...
		if !bytes.Contains(up.lastRequest().body, []byte(`"stream_options":{"include_usage":true}`)) {
			t.Fatalf("usage not requested upstream: %s", up.lastRequest().body)
		}
		// ...and relays every event but the usage-only one, model renamed.
		var want []byte
		for _, ev := range evs {
			if !bytes.Contains(ev, []byte(`"choices":[]`)) {
				want = append(want, public(ev)...)
			}
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("stream differs:\n%s\nwant\n%s", body, want)
		}
		waitFor(t, "access log", func() bool { return len(tg.accessLines(t)) == 1 })
		if l := tg.accessLines(t)[0]; l["input_tokens"] != 19.0 || l["output_tokens"] != 8.0 ||
			l["cached_tokens"] != 3.0 || l["reasoning_tokens"] != 2.0 {
			t.Errorf("usage not counted from the stripped chunk: %v", l)
		}
	})
	t.Run("client asked for usage", func(t *testing.T) {
		reqBody := `{"model":"fast","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`
		_, body := tg.post(t, reqBody)
		if got := up.lastRequest().body; string(got) != strings.Replace(reqBody, `"fast"`, `"gpt-4o-mini"`, 1) {
			t.Fatalf("upstream body %s", got)
		}
		var want []byte
		for _, ev := range evs {
			want = append(want, public(ev)...)
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("stream differs:\n%s\nwant\n%s", body, want)
		}
	})
}

// TestStreamIsNotBuffered holds the upstream after its first event: the
// client must have that event before the upstream goes on.
func TestStreamIsNotBuffered(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	release := make(chan struct{})
	up := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(evs[0])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		for _, ev := range evs[1:] {
			w.Write(ev)
		}
	})
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	req, _ := http.NewRequest("POST", tg.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	first, err := r.ReadString('\n')
	if err != nil || !strings.Contains(first, `"role":"assistant"`) {
		t.Fatalf("first event %q, %v", first, err)
	}
	close(release) // only now may the upstream finish
	rest := new(bytes.Buffer)
	rest.ReadFrom(r)
	if !strings.HasSuffix(rest.String(), "data: [DONE]\n\n") {
		t.Fatalf("stream did not finish: %q", rest.String())
	}
}

// TestStreamBurstIsOneWrite has the upstream send its first events as
// separate HTTP chunks in one TCP write, then hold: the client must get
// them as one chunk (the relay wrote once, not once per upstream chunk),
// and before the upstream goes on (it did not wait for more).
func TestStreamBurstIsOneWrite(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	burst, rest := evs[:4], evs[4:]
	release := make(chan struct{})
	addr := rawUpstream(t, func(conn net.Conn) {
		conn.Write(append([]byte(rawStreamHead), chunks(burst)...))
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		conn.Write(append(chunks(rest), "0\r\n\r\n"...))
	})
	tg := startGateway(t, channel("oa", "http://"+addr+"/v1", ""))
	conn, r := rawStreamRequest(t, tg,
		`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`)
	defer conn.Close()
	// Read the raw chunks: http.ReadResponse leaves r at the body.
	chunk := func() []byte {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk size %q", line)
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatal(err)
		}
		return b[:n]
	}
	if got, want := chunk(), bytes.Join(burst, nil); !bytes.Equal(got, want) {
		t.Fatalf("first chunk:\n%s\nwant the whole burst:\n%s", got, want)
	}
	close(release)
	var tail []byte
	for {
		c := chunk()
		if len(c) == 0 {
			break
		}
		tail = append(tail, c...)
	}
	if want := bytes.Join(rest, nil); !bytes.Equal(tail, want) {
		t.Fatalf("rest of the stream:\n%s\nwant:\n%s", tail, want)
	}
}

func TestModelsListsWhatTheKeyMayUse(t *testing.T) {
	up := newMock(t, jsonReply(200, nil))
	tg := startGateway(t,
		channel("a", up.baseURL(), `model_map: {fast: gpt-4o-mini}`)+
			"  - {name: b, type: openai, base_url: \""+up.baseURL()+"\", api_keys: [k], models: [gpt-4.1, secret-model]}\n")
	ids := func(key string) []string {
		resp, body := tg.do(t, "GET", "/v1/models", key, "")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var list struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &list); err != nil || list.Object != "list" {
			t.Fatalf("not a model list: %s", body)
		}
		var out []string
		for _, m := range list.Data {
			if m.Object != "model" {
				t.Fatalf("entry %v", m)
			}
			out = append(out, m.ID)
		}
		return out
	}
	// gpt-4o-mini is served only under its public alias "fast".
	if got := strings.Join(ids(clientKey), ","); got != "fast,gpt-4.1" {
		t.Errorf("client key sees %s", got)
	}
	if got := strings.Join(ids(limitedKey), ","); got != "fast,gpt-4.1,secret-model" {
		t.Errorf("unrestricted key sees %s", got)
	}
	resp, body := tg.do(t, "GET", "/v1/models", "", "")
	checkError(t, resp, body, 401, "missing_api_key")
}

func TestErrorsInOpenAIShape(t *testing.T) {
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGateway(t, channel("oa", up.baseURL(), `model_map: {fast: gpt-4o-mini, secret-model: gpt-4o-mini}`))
	f := func(key, body string, status int, code string) {
		t.Helper()
		resp, b := tg.do(t, "POST", "/v1/chat/completions", key, body)
		checkError(t, resp, b, status, code)
	}
	f("", chatBody, 401, "missing_api_key")
	f("sk-wrong-0123456789abcdef", chatBody, 401, "invalid_api_key")
	f(clientKey, `{"model":"secret-model","messages":[{"role":"user","content":"x"}]}`, 403, "model_not_allowed")
	f(clientKey, `{"model":"gpt-nope","messages":[{"role":"user","content":"x"}]}`, 503, "model_not_found")
	f(clientKey, `{"model":"fast","messages":[`, 400, "")
	f(clientKey, `not json`, 400, "")
	f(clientKey, `{"messages":[{"role":"user","content":"x"}]}`, 400, "")
	f(clientKey, `{"model":"fast"}`, 400, "")
	f(clientKey, `{"model":"fast","messages":[]}`, 400, "")
	f(clientKey, `{"model":42,"messages":[{"role":"user","content":"x"}]}`, 400, "")
	f(clientKey, `{"model":"fast","stream":"yes","messages":[{"role":"user","content":"x"}]}`, 400, "")
	f(clientKey, `{"model":"fast","model":"secret-model","messages":[{"role":"user","content":"x"}]}`, 400, "")
	big := `{"model":"fast","messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<20) + `"}]}`
	f(clientKey, big, 413, "request_too_large")

	resp, b := tg.do(t, "POST", "/v1/nothing-here", clientKey, "{}")
	checkError(t, resp, b, 404, "unknown_url")
	resp, b = tg.do(t, "GET", "/v1/chat/completions", clientKey, "")
	checkError(t, resp, b, 405, "method_not_allowed")
	if n := up.hits.Load(); n != 0 {
		t.Errorf("%d rejected requests reached the upstream", n)
	}
	// The gateway is still up and serving.
	if resp, b := tg.post(t, chatBody); resp.StatusCode != 200 {
		t.Fatalf("after the errors: %d %s", resp.StatusCode, b)
	}
}

func TestUpstreamErrorKeepsStatusAndHidesCredentials(t *testing.T) {
	msg := `{"error":{"message":"Invalid 'messages[0].content': too long. Key used: ` + upstreamKey + `, also sk-proj-abc****wxyz","type":"invalid_request_error","param":"messages[0].content","code":"string_above_max_length"}}`
	up := newMock(t, jsonReply(400, []byte(msg)))
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	resp, body := tg.post(t, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}`)
	checkError(t, resp, body, 400, "string_above_max_length")
	if bytes.Contains(body, []byte("SECRET")) || bytes.Contains(body, []byte("sk-proj")) {
		t.Fatalf("upstream credential echoed to the client: %s", body)
	}
	if !bytes.Contains(body, []byte(`"param":"messages[0].content"`)) || !bytes.Contains(body, []byte("too long")) {
		t.Errorf("upstream message or param lost: %s", body)
	}
	if up.hits.Load() != 1 {
		t.Errorf("a 400 was retried: %d upstream hits", up.hits.Load())
	}
}

func TestEveryResponseHasARequestID(t *testing.T) {
	tg := startGateway(t, channel("oa", closedPort(t), ""))
	seen := map[string]bool{}
	for _, path := range []string{"/healthz", "/readyz", "/v1/models", "/nope"} {
		resp, _ := tg.do(t, "GET", path, clientKey, "")
		id := resp.Header.Get("X-Request-Id")
		if id == "" || seen[id] {
			t.Errorf("%s: request id %q (seen before: %v)", path, id, seen[id])
		}
		seen[id] = true
	}
	req, _ := http.NewRequest("GET", tg.url+"/healthz", nil)
	req.Header.Set("X-Request-Id", "trace-42")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "trace-42" {
		t.Errorf("the client's request id was replaced by %q", got)
	}
}

// TestPublicNameIsEscaped: a public model name that needs JSON escaping is
// written escaped into responses and stream events.
func TestPublicNameIsEscaped(t *testing.T) {
	whole := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	stream := newMock(t, streamReply(events(fixture(t, "chat_stream.sse")), 0))
	tg := startGateway(t,
		channel("a", whole.baseURL(), `model_map: {'gpt-"q"': gpt-4o-mini}`)+
			channel("b", stream.baseURL(), `model_map: {'gpt-"s"': gpt-4o-mini}`))
	for _, tc := range []struct{ model, body string }{
		{`gpt-\"q\"`, `{"model":"gpt-\"q\"","messages":[{"role":"user","content":"Hi"}]}`},
		{`gpt-\"s\"`, `{"model":"gpt-\u0022s\"","stream":true,"messages":[{"role":"user","content":"Hi"}]}`},
	} {
		resp, body := tg.post(t, tc.body)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		for _, ev := range events(body) {
			data := bytes.TrimPrefix(bytes.TrimSpace(ev), []byte("data: "))
			if string(data) == "[DONE]" {
				continue
			}
			var v struct{ Model string }
			if err := json.Unmarshal(data, &v); err != nil || v.Model != strings.ReplaceAll(tc.model, `\`, "") {
				t.Fatalf("model %q (%v) in %s", v.Model, err, data)
			}
		}
	}
}
