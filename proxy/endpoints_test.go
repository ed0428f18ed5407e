package proxy_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// endpointsUpstream is an OpenAI-compatible provider that serves legacy
// completions and embeddings from the fixtures, by path, and records what it
// was sent.
func endpointsUpstream(t *testing.T) *mockUpstream {
	t.Helper()
	completion, stream := fixture(t, "completion_response.json"), events(fixture(t, "completion_stream.sse"))
	floats, b64 := fixture(t, "embeddings_response.json"), fixture(t, "embeddings_base64.json")
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.URL.Path == "/v1/completions" && bytes.Contains(body, []byte(`"stream":true`)):
			streamReply(stream, 0)(w, r, body)
		case r.URL.Path == "/v1/completions":
			jsonReply(200, completion)(w, r, body)
		case r.URL.Path == "/v1/embeddings" && bytes.Contains(body, []byte(`"base64"`)):
			jsonReply(200, b64)(w, r, body)
		case r.URL.Path == "/v1/embeddings":
			jsonReply(200, floats)(w, r, body)
		default:
			jsonReply(404, []byte(`{"error":{"message":"unknown path","type":"invalid_request_error"}}`))(w, r, body)
		}
	})
}

// TestCompletionsAndEmbeddings drives /v1/completions and /v1/embeddings
// with the official OpenAI client through an OpenAI-compatible channel that
// maps the public names: the upstream gets its own names, its key and the
// client's bytes otherwise untouched; the client gets the public names back
// and the upstream's answer.
func TestCompletionsAndEmbeddings(t *testing.T) {
	up := endpointsUpstream(t)
	tg := startGateway(t, "  - {name: up, type: openai, base_url: \""+up.baseURL()+"\", api_keys: ["+upstreamKey+"], "+
		"model_map: {gpt-instruct: gpt-3.5-turbo-instruct, gpt-embed: text-embedding-3-small}}\n")
	client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	ctx := context.Background()
	sent := func(t *testing.T, path, public, upstream string, body []byte) {
		t.Helper()
		got := up.lastRequest()
		if got.path != path || got.header.Get("Authorization") != "Bearer "+upstreamKey {
			t.Fatalf("upstream got %s with %q", got.path, got.header.Get("Authorization"))
		}
		want := bytes.Replace(body, []byte(`"`+public+`"`), []byte(`"`+upstream+`"`), 1)
		if !bytes.Equal(got.body, want) {
			t.Fatalf("upstream body\n%s\nwant\n%s", got.body, want)
		}
	}

	t.Run("completion", func(t *testing.T) {
		c, err := client.Completions.New(ctx, openai.CompletionNewParams{
			Model: "gpt-instruct", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say this is a test")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Model != "gpt-instruct" || c.Choices[0].Text != "\n\nThis is indeed a test" || c.Choices[0].FinishReason != "length" ||
			c.Usage.PromptTokens != 5 || c.Usage.CompletionTokens != 7 {
			t.Fatalf("completion %+v", c)
		}
		if got := up.lastRequest(); got.path != "/v1/completions" || !bytes.Contains(got.body, []byte(`"model":"gpt-3.5-turbo-instruct"`)) {
			t.Fatalf("upstream got %s %s", got.path, got.body)
		}
	})
	t.Run("completion stream", func(t *testing.T) {
		s := client.Completions.NewStreaming(ctx, openai.CompletionNewParams{
			Model: "gpt-instruct", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say this is a test")},
		})
		var text strings.Builder
		for s.Next() {
			c := s.Current()
			if c.Model != "gpt-instruct" {
				t.Fatalf("chunk model %q", c.Model)
			}
			if len(c.Choices) == 0 {
				t.Fatalf("usage chunk the client did not ask for: %+v", c)
			}
			text.WriteString(c.Choices[0].Text)
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if text.String() != "\n\nThis is a test" {
			t.Fatalf("text %q", text.String())
		}
		if got := up.lastRequest(); !bytes.Contains(got.body, []byte(`"stream_options":{"include_usage":true}`)) {
			t.Fatalf("the gateway did not ask for usage upstream: %s", got.body)
		}
	})
	t.Run("embeddings", func(t *testing.T) {
		e, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
			Model: "gpt-embed", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"hello", "world"}},
			Dimensions: openai.Int(4),
		})
		if err != nil {
			t.Fatal(err)
		}
		if e.Model != "gpt-embed" || len(e.Data) != 2 || e.Data[1].Index != 1 || e.Data[1].Embedding[0] != 0.0023064255 ||
			e.Usage.PromptTokens != 8 {
			t.Fatalf("embeddings %+v", e)
		}
		if got := up.lastRequest(); !bytes.Contains(got.body, []byte(`"model":"text-embedding-3-small"`)) ||
			!bytes.Contains(got.body, []byte(`"dimensions":4`)) || bytes.Contains(got.body, []byte("gpt-embed")) {
			t.Fatalf("upstream got %s", got.body)
		}
	})
	t.Run("embeddings base64", func(t *testing.T) {
		body := `{"model": "gpt-embed", "input": "hi", "encoding_format": "base64"}`
		resp, got := tg.do(t, "POST", "/v1/embeddings", clientKey, body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, got)
		}
		sent(t, "/v1/embeddings", "gpt-embed", "text-embedding-3-small", []byte(body))
		var r struct {
			Model string
			Data  []struct{ Embedding string }
		}
		if err := json.Unmarshal(got, &r); err != nil || r.Model != "gpt-embed" || len(r.Data) != 1 {
			t.Fatalf("%v %s", err, got)
		}
		if v := decodeVector(t, r.Data[0].Embedding); len(v) != 4 || v[0] != 0.5 || v[1] != -1 {
			t.Fatalf("vector %v", v)
		}
	})
	t.Run("access log", func(t *testing.T) {
		// A stream's line is written once the relay has finished, which may
		// be just after its client read the end.
		waitFor(t, "the access log's usage of each endpoint", func() bool {
			var seen []string
			for _, l := range tg.accessLines(t) {
				if l["endpoint"] == "embeddings" && l["status"] == 200.0 && l["input_tokens"] == 8.0 && l["model"] == "gpt-embed" {
					seen = append(seen, "embeddings")
				}
				if l["endpoint"] == "completions" && l["status"] == 200.0 && l["input_tokens"] == 5.0 && l["output_tokens"] == 4.0 {
					seen = append(seen, "completions stream")
				}
			}
			return len(seen) == 2
		})
	})
}

func decodeVector(t *testing.T, s string) []float32 {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw)%4 != 0 {
		t.Fatalf("base64 vector %q: %v", s, err)
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v
}

// TestEndpointNotServed: a model none of whose channels serves an
// endpoint (their type has no such API, or their endpoints leave it out:
// the Gemini channel's embeddings)
// gets a 503 that names the endpoint, in the OpenAI shape, and no upstream
// is called; the endpoints the channel serves still work.
func TestEndpointNotServed(t *testing.T) {
	up := endpointsUpstream(t)
	chat := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGateway(t,
		"  - {name: claude, type: anthropic, base_url: \""+up.srv.URL+"\", api_keys: [k], models: [claude-x]}\n"+
			"  - {name: gem, type: gemini, base_url: \""+up.srv.URL+"\", api_keys: [k], models: [gemini-x], endpoints: [chat]}\n"+
			"  - {name: chatonly, type: openai, base_url: \""+chat.baseURL()+"\", api_keys: [k], models: [gpt-4o-mini], endpoints: [chat]}\n")
	for _, c := range []struct{ path, model, endpoint string }{
		{"/v1/embeddings", "claude-x", "embeddings"},
		{"/v1/completions", "claude-x", "completions"},
		{"/v1/embeddings", "gemini-x", "embeddings"},
		{"/v1/completions", "gemini-x", "completions"},
		{"/v1/embeddings", "gpt-4o-mini", "embeddings"},
		{"/v1/completions", "gpt-4o-mini", "completions"},
	} {
		body := `{"model":"` + c.model + `","input":"x","prompt":"x"}`
		resp, got := tg.do(t, "POST", c.path, openKey, body)
		var e struct {
			Error struct{ Message, Type, Code string }
		}
		if resp.StatusCode != 503 || json.Unmarshal(got, &e) != nil || e.Error.Code != "endpoint_not_served" ||
			!strings.Contains(e.Error.Message, c.endpoint) || !strings.Contains(e.Error.Message, c.model) {
			t.Errorf("%s %s: %d %s", c.path, c.model, resp.StatusCode, got)
		}
	}
	if up.hits.Load() != 0 || chat.hits.Load() != 0 {
		t.Fatalf("upstreams called %d and %d times", up.hits.Load(), chat.hits.Load())
	}
	if resp, got := tg.post(t, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`); resp.StatusCode != 200 {
		t.Fatalf("chat on the chat-only channel: %d %s", resp.StatusCode, got)
	}
}

// TestEndpointFailover: an embeddings request fails over from a channel
// that answers 500 to the next one, as chat does.
func TestEndpointFailover(t *testing.T) {
	bad := newMock(t, jsonReply(500, []byte(`{"error":{"message":"boom","type":"server_error"}}`)))
	good := endpointsUpstream(t)
	tg := startGateway(t,
		"  - {name: bad, type: openai, base_url: \""+bad.baseURL()+"\", api_keys: [k], models: [text-embedding-3-small], priority: 0}\n"+
			"  - {name: good, type: openai, base_url: \""+good.baseURL()+"\", api_keys: [k], models: [text-embedding-3-small], priority: 1}\n")
	resp, got := tg.do(t, "POST", "/v1/embeddings", openKey, `{"model":"text-embedding-3-small","input":["a","b"]}`)
	if resp.StatusCode != 200 || bad.hits.Load() != 1 || good.hits.Load() != 1 || !bytes.Contains(got, []byte(`0.0023064255`)) {
		t.Fatalf("%d (bad %d, good %d) %s", resp.StatusCode, bad.hits.Load(), good.hits.Load(), got)
	}
}

// TestEndpointBadInput: a request without the endpoint's required field,
// or with one of the wrong type, is refused in the OpenAI shape, naming the
// field, and the upstream is never called.
func TestEndpointBadInput(t *testing.T) {
	up := endpointsUpstream(t)
	tg := startGateway(t, "  - {name: up, type: openai, base_url: \""+up.baseURL()+"\", api_keys: [k], models: [m]}\n")
	for _, c := range []struct{ path, body, param string }{
		{"/v1/embeddings", `{"model":"m"}`, "input"},
		{"/v1/embeddings", `{"model":"m","input":7}`, "input"},
		{"/v1/embeddings", `{"input":"x"}`, "model"},
		{"/v1/embeddings", `{"model":"m","input":"x"`, ""},
		{"/v1/completions", `{"model":"m"}`, "prompt"},
		{"/v1/completions", `{"model":"m","prompt":{"a":1}}`, "prompt"},
		{"/v1/completions", `{"model":"m","prompt":"x","stream":"yes"}`, "stream"},
	} {
		resp, got := tg.do(t, "POST", c.path, openKey, c.body)
		var e struct{ Error struct{ Type, Param string } }
		if resp.StatusCode != 400 || json.Unmarshal(got, &e) != nil || e.Error.Type != "invalid_request_error" ||
			e.Error.Param != c.param {
			t.Errorf("%s %s: %d %s", c.path, c.body, resp.StatusCode, got)
		}
	}
	if up.hits.Load() != 0 {
		t.Fatalf("upstream called %d times", up.hits.Load())
	}
}

// TestDemoEndpoints: the demo channel answers completions and embeddings
// too, so that every endpoint can be tried with no provider: one text
// always gets one unit vector, in floats or base64.
func TestDemoEndpoints(t *testing.T) {
	tg := startGateway(t, "  - {name: demo, type: demo, models: [demo], pace: 1ms}\n")
	client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	ctx := context.Background()
	e, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "demo", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"hello", "world", "hello"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Data) != 3 || len(e.Data[0].Embedding) != 16 || e.Usage.PromptTokens < 1 {
		t.Fatalf("embeddings %+v", e)
	}
	norm := 0.0
	for i, x := range e.Data[0].Embedding {
		norm += x * x
		if x != e.Data[2].Embedding[i] {
			t.Fatalf("one text, two vectors: %v %v", e.Data[0].Embedding, e.Data[2].Embedding)
		}
	}
	if math.Abs(norm-1) > 1e-5 || e.Data[0].Embedding[0] == e.Data[1].Embedding[0] {
		t.Fatalf("not unit vectors of their texts: %v", e.Data)
	}
	resp, got := tg.do(t, "POST", "/v1/embeddings", clientKey, `{"model":"demo","input":"hello","encoding_format":"base64","dimensions":3}`)
	var r struct{ Data []struct{ Embedding string } }
	if resp.StatusCode != 200 || json.Unmarshal(got, &r) != nil || len(r.Data) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	if v := decodeVector(t, r.Data[0].Embedding); len(v) != 3 {
		t.Fatalf("base64 vector %v", v)
	}

	c, err := client.Completions.New(ctx, openai.CompletionNewParams{
		Model: "demo", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hi")},
	})
	if err != nil || !strings.Contains(c.Choices[0].Text, "You said: \"Say hi\"") || c.Usage.CompletionTokens == 0 {
		t.Fatalf("completion %+v %v", c, err)
	}
	s := client.Completions.NewStreaming(ctx, openai.CompletionNewParams{
		Model: "demo", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var text strings.Builder
	var usage int64
	for s.Next() {
		if ch := s.Current(); len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Text)
		} else {
			usage = ch.Usage.CompletionTokens
		}
	}
	if s.Err() != nil || text.String() != c.Choices[0].Text || usage != c.Usage.CompletionTokens {
		t.Fatalf("stream %q (usage %d) vs %q: %v", text.String(), usage, c.Choices[0].Text, s.Err())
	}
}
