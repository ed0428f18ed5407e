package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// rerankBody is a client's rerank request for the public model gpt-rerank:
// a string and an object document, spaced as a client may space them.
const rerankBody = `{"model": "gpt-rerank", "query": "organic skincare",
 "documents": ["New makeup trends", {"text": "Organic skincare for sensitive skin", "id": "p-17"}],
 "top_n": 2, "return_documents": true, "truncation": true}`

// cohereChannel is the YAML of a cohere channel at mock serving
// gpt-rerank as rerank-v3.5.
func cohereChannel(name string, mock *mockUpstream, extra string) string {
	return "  - {name: " + name + ", type: cohere, base_url: \"" + mock.srv.URL + "\", api_keys: [" + upstreamKey +
		"], model_map: {gpt-rerank: rerank-v3.5}" + extra + "}\n"
}

// cohereMock answers as Cohere's /v2/rerank does.
func cohereMock(t *testing.T) *mockUpstream {
	return newMock(t, jsonReply(200, fixture(t, "cohere_rerank_response.json")))
}

// TestRerankPassThrough: an OpenAI-compatible channel (a Jina-like
// server) gets the client's bytes but the model, with its own key and
// never the client's; the client gets the upstream's answer but the model
// name, and its tokens reach the usage row and the access log.
func TestRerankPassThrough(t *testing.T) {
	st := openStore(t)
	answer := fixture(t, "rerank_response.json")
	up := newMock(t, jsonReply(200, answer))
	tg := startGatewayWith(t, "  - {name: jina, type: openai, base_url: \""+up.baseURL()+"\", api_keys: ["+upstreamKey+"], "+
		"model_map: {gpt-rerank: jina-reranker-v2-base-multilingual}}\n", proxy.Options{Store: st, Usage: newUsageWriter(t, st)})

	resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, rerankBody)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	sent := up.lastRequest()
	want := strings.Replace(rerankBody, `"gpt-rerank"`, `"jina-reranker-v2-base-multilingual"`, 1)
	if sent.path != "/v1/rerank" || string(sent.body) != want {
		t.Fatalf("upstream got %s\n%s\nwant\n%s", sent.path, sent.body, want)
	}
	checkUpstreamKey(t, sent.header)
	if wantAnswer := bytes.Replace(answer, []byte(`"jina-reranker-v2-base-multilingual"`), []byte(`"gpt-rerank"`), 1); !bytes.Equal(got, wantAnswer) {
		t.Fatalf("client got\n%s\nwant\n%s", got, wantAnswer)
	}
	id := resp.Header.Get("X-Request-Id")
	checkAccessLine(t, tg, "jina", 38)

	// A key's tpm is settled with the answer's tokens: the next request
	// finds them spent, with its own reservation (a quarter of its bytes).
	k := createKey(t, st, consoleKey, func(k *store.Key) { k.TPM = 1000 })
	tg.do(t, "POST", "/v1/rerank", consoleKey, rerankBody)
	resp, _ = tg.do(t, "POST", "/v1/rerank", consoleKey, rerankBody)
	if got, want := resp.Header.Get("X-Ratelimit-Remaining-Tokens"), strconv.Itoa(1000-38-len(rerankBody)/4); got != want {
		t.Errorf("remaining tokens %s, want %s", got, want)
	}
	rows := usageRows(t, st, 3)
	checkUsage(t, rows[id], store.Usage{KeyName: "client", Model: "gpt-rerank", Channel: "jina", Status: 200,
		Input: 38, RequestID: id, ClientStyle: "openai", Endpoint: "rerank"})
	if last := resp.Header.Get("X-Request-Id"); rows[last].KeyID != k.ID || rows[last].Input != 38 {
		t.Errorf("row %+v", rows[last])
	}
}

// checkUpstreamKey checks that an upstream request carries the channel's
// key as a bearer token, and the client's key nowhere.
func checkUpstreamKey(t *testing.T, h http.Header) {
	t.Helper()
	if h.Get("Authorization") != "Bearer "+upstreamKey {
		t.Errorf("upstream Authorization %q", h.Get("Authorization"))
	}
	for k, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, clientKey) {
				t.Errorf("the upstream saw the client's key in %s", k)
			}
		}
	}
}

// checkAccessLine waits for the access-log line of a rerank served by
// channel with its input tokens.
func checkAccessLine(t *testing.T, tg *testGateway, channel string, tokens float64) {
	t.Helper()
	waitFor(t, "the rerank's access-log line", func() bool {
		for _, l := range tg.accessLines(t) {
			if l["endpoint"] == "rerank" && l["status"] == 200.0 && l["channel"] == channel &&
				l["model"] == "gpt-rerank" && l["input_tokens"] == tokens {
				return true
			}
		}
		return false
	})
}

// TestRerankCohere: a cohere channel gets Cohere's v2 request at
// /v2/rerank with its key (the documents as text, no return_documents);
// the client gets the results with the documents it sent, as it sent
// them, the public model name and Cohere's meta, and the tokens are
// counted. A document Cohere cannot rank is a 400 that never reaches it.
func TestRerankCohere(t *testing.T) {
	co := cohereMock(t)
	tg := startGateway(t, cohereChannel("co", co, ""))
	resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, rerankBody)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	sent := co.lastRequest()
	want := `{"model":"rerank-v3.5","query":"organic skincare","documents":["New makeup trends","Organic skincare for sensitive skin"],"top_n":2}`
	if sent.path != "/v2/rerank" || string(sent.body) != want {
		t.Fatalf("cohere got %s %s\nwant %s", sent.path, sent.body, want)
	}
	checkUpstreamKey(t, sent.header)
	var r struct {
		ID, Model string
		Results   []struct {
			Index          int
			RelevanceScore float64 `json:"relevance_score"`
			Document       json.RawMessage
		}
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		}
		Meta struct {
			BilledUnits struct {
				SearchUnits int `json:"search_units"`
			} `json:"billed_units"`
		}
	}
	if err := json.Unmarshal(got, &r); err != nil || r.Model != "gpt-rerank" || len(r.Results) != 2 || r.Usage.TotalTokens != 27 ||
		r.Meta.BilledUnits.SearchUnits != 1 || r.ID != "b6f4b1c2-8f0e-4d7a-9e55-0c1a2b3c4d5e" {
		t.Fatalf("%v %s", err, got)
	}
	if first, second := r.Results[0], r.Results[1]; first.Index != 1 || first.RelevanceScore != 0.9521 ||
		string(first.Document) != `{"text": "Organic skincare for sensitive skin", "id": "p-17"}` ||
		string(second.Document) != `{"text":"New makeup trends"}` {
		t.Fatalf("results %s", got)
	}
	checkAccessLine(t, tg, "co", 27)

	hits := co.hits.Load()
	resp, got = tg.do(t, "POST", "/v1/rerank", clientKey, `{"model":"gpt-rerank","query":"q","documents":[{"title":"no text"}]}`)
	checkError(t, resp, got, 400, "")
	if !bytes.Contains(got, []byte(`"param":"documents"`)) || co.hits.Load() != hits {
		t.Fatalf("%s; cohere called %d times more", got, co.hits.Load()-hits)
	}
}

// TestRerankFailover: a rerank fails over from a channel that answers 500
// to the next one, here of another type, and the breaker counts it.
func TestRerankFailover(t *testing.T) {
	bad := newMock(t, jsonReply(500, []byte(`{"error":{"message":"boom","type":"server_error"}}`)))
	co := cohereMock(t)
	tg := startGateway(t, "  - {name: bad, type: openai, base_url: \""+bad.baseURL()+"\", api_keys: [k], models: [gpt-rerank], priority: 0}\n"+
		cohereChannel("co", co, ", priority: 1"))
	resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, rerankBody)
	if resp.StatusCode != 200 || bad.hits.Load() != 1 || co.hits.Load() != 1 || !bytes.Contains(got, []byte(`"relevance_score":0.9521`)) {
		t.Fatalf("%d (bad %d, cohere %d) %s", resp.StatusCode, bad.hits.Load(), co.hits.Load(), got)
	}
	if bad.lastRequest().path != "/v1/rerank" {
		t.Fatalf("bad got %s", bad.lastRequest().path)
	}
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{`rosetta_requests_total{endpoint="rerank",model="gpt-rerank",status="200"} 1`,
		`rosetta_upstream_attempts_total{channel="bad",outcome="server_error"} 1`, `rosetta_upstream_attempts_total{channel="co",outcome="ok"} 1`} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestRerankNotServed: a model none of whose channels serves rerank gets
// 503 endpoint_not_served naming it, and a cohere channel's model gets the
// same for chat; no upstream is called. A model the key may not use is a
// 403 first.
func TestRerankNotServed(t *testing.T) {
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	co := cohereMock(t)
	tg := startGateway(t, "  - {name: claude, type: anthropic, base_url: \""+up.srv.URL+"\", api_keys: [k], models: [gpt-claude]}\n"+
		"  - {name: chatonly, type: openai, base_url: \""+up.baseURL()+"\", api_keys: [k], models: [gpt-4o-mini], endpoints: [chat]}\n"+
		cohereChannel("co", co, ""))
	for _, c := range []struct{ path, body, endpoint string }{
		{"/v1/rerank", `{"model":"gpt-claude","query":"q","documents":["a"]}`, "rerank"},
		{"/v1/rerank", `{"model":"gpt-4o-mini","query":"q","documents":["a"]}`, "rerank"},
		{"/v1/chat/completions", `{"model":"gpt-rerank","messages":[{"role":"user","content":"Hi"}]}`, "chat"},
		{"/v1/embeddings", `{"model":"gpt-rerank","input":"Hi"}`, "embeddings"},
	} {
		resp, got := tg.do(t, "POST", c.path, clientKey, c.body)
		checkError(t, resp, got, 503, "endpoint_not_served")
		if !bytes.Contains(got, []byte("serves "+c.endpoint)) {
			t.Errorf("%s: %s", c.body, got)
		}
	}
	resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, `{"model":"rerank-v3.5","query":"q","documents":["a"]}`)
	checkError(t, resp, got, 403, "model_not_allowed")
	if up.hits.Load() != 0 || co.hits.Load() != 0 {
		t.Fatalf("upstreams called %d and %d times", up.hits.Load(), co.hits.Load())
	}
}

// TestRerankBadInput: a rerank without its query or documents, with
// documents of the wrong type, or with a top_n that is not a positive
// integer is refused in the OpenAI shape, naming the field, before any
// upstream is called; so is a request without the gateway's key.
func TestRerankBadInput(t *testing.T) {
	up := newMock(t, jsonReply(200, fixture(t, "rerank_response.json")))
	tg := startGateway(t, "  - {name: up, type: openai, base_url: \""+up.baseURL()+"\", api_keys: [k], models: [gpt-rerank]}\n")
	for _, c := range []struct{ body, param string }{
		{`{"model":"gpt-rerank","documents":["a"]}`, "query"},
		{`{"model":"gpt-rerank","query":["q"],"documents":["a"]}`, "query"},
		{`{"model":"gpt-rerank","query":"q"}`, "documents"},
		{`{"model":"gpt-rerank","query":"q","documents":[]}`, "documents"},
		{`{"model":"gpt-rerank","query":"q","documents":"a"}`, "documents"},
		{`{"model":"gpt-rerank","query":"q","documents":["a",2]}`, "documents"},
		{`{"model":"gpt-rerank","query":"q","documents":["a"],"top_n":0}`, "top_n"},
		{`{"model":"gpt-rerank","query":"q","documents":["a"],"top_n":2.5}`, "top_n"},
		{`{"model":"gpt-rerank","query":"q","documents":["a"],"top_n":"2"}`, "top_n"},
		{`{"query":"q","documents":["a"]}`, "model"},
		{`{"model":"gpt-rerank","query":"q","documents":["a"]`, ""},
	} {
		resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, c.body)
		var e struct{ Error struct{ Type, Param string } }
		if resp.StatusCode != 400 || json.Unmarshal(got, &e) != nil || e.Error.Type != "invalid_request_error" || e.Error.Param != c.param {
			t.Errorf("%s: %d %s", c.body, resp.StatusCode, got)
		}
	}
	resp, got := tg.do(t, "POST", "/v1/rerank", "", `{"model":"gpt-rerank","query":"q","documents":["a"]}`)
	checkError(t, resp, got, 401, "")
	if up.hits.Load() != 0 {
		t.Fatalf("upstream called %d times", up.hits.Load())
	}
}

// TestDemoRerank: the demo channel ranks documents by the query's words
// they hold, the same way every time, keeps top_n and returns the
// documents when asked.
func TestDemoRerank(t *testing.T) {
	tg := startGateway(t, demoChannel)
	body := `{"model":"demo","query":"the capital of France","top_n":2,"return_documents":true,
	 "documents":["Berlin is in Germany",{"text":"France: its capital","id":3},"Paris is the capital of France"]}`
	resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, body)
	want := `{"id":"rerank-demo","model":"demo","results":[` +
		`{"index":2,"relevance_score":1,"document":{"text":"Paris is the capital of France"}},` +
		`{"index":1,"relevance_score":0.5,"document":{"text":"France: its capital","id":3}}],` +
		`"usage":{"prompt_tokens":22,"total_tokens":22}}`
	if resp.StatusCode != 200 || string(got) != want {
		t.Fatalf("%d\n%s\nwant\n%s", resp.StatusCode, got, want)
	}
	if _, again := tg.do(t, "POST", "/v1/rerank", clientKey, body); !bytes.Equal(again, got) {
		t.Fatalf("another ranking of the same request: %s", again)
	}
}

// TestTestCohereChannel: the console's test of a cohere channel, which
// serves no chat, is a rerank of one document.
func TestTestCohereChannel(t *testing.T) {
	co := cohereMock(t)
	tg := startGateway(t, cohereChannel("co", co, ""))
	if d, err := tg.g.TestChannel(context.Background(), "co"); err != nil || d <= 0 {
		t.Fatalf("%v, %v", d, err)
	}
	got := co.lastRequest()
	if want := `{"model":"rerank-v3.5","query":"ping","documents":["ping"]}`; got.path != "/v2/rerank" || string(got.body) != want {
		t.Fatalf("test request %s %s", got.path, got.body)
	}
	checkUpstreamKey(t, got.header)
}

// TestRerankCohereError: Cohere's own error reaches the client in OpenAI's
// shape with its status and message; a rejected key is the gateway's
// problem (502), never the client's.
func TestRerankCohereError(t *testing.T) {
	for _, c := range []struct {
		status, want int
		code         string
	}{{400, 400, ""}, {401, 502, "upstream_auth_failed"}} {
		co := newMock(t, jsonReply(c.status, []byte(`{"id":"e1","message":"invalid request: too many documents"}`)))
		tg := startGateway(t, cohereChannel("co", co, ""))
		resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, rerankBody)
		checkError(t, resp, got, c.want, c.code)
		if !bytes.Contains(got, []byte("too many documents")) {
			t.Errorf("%d: %s", c.status, got)
		}
	}
}

// TestCohereTraceID: Cohere's trace id (X-Debug-Trace-Id, the id its
// support looks a request up by) reaches the client as
// X-Upstream-Request-Id, with an answer and with an error.
func TestCohereTraceID(t *testing.T) {
	status := 200
	co := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("X-Debug-Trace-Id", "6e0f777a5f86c8b5453bf374fd3fadbd")
		if status != 200 {
			jsonReply(status, []byte(`{"message":"invalid request: too many documents"}`))(w, r, body)
			return
		}
		jsonReply(200, fixture(t, "cohere_rerank_response.json"))(w, r, body)
	})
	tg := startGateway(t, cohereChannel("co", co, ""))
	for _, status = range []int{200, 400} {
		resp, got := tg.do(t, "POST", "/v1/rerank", clientKey, rerankBody)
		if resp.StatusCode != status || resp.Header.Get("X-Upstream-Request-Id") != "6e0f777a5f86c8b5453bf374fd3fadbd" {
			t.Errorf("%d, X-Upstream-Request-Id %q: %s", resp.StatusCode, resp.Header.Get("X-Upstream-Request-Id"), got)
		}
	}
}
