package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"
)

// geminiEmbedUpstream answers batchEmbedContents for model as the Gemini
// API does, with the channel's key only: for each request a vector
// [i + 0.5, -1, bytes of its text], and no usage (Gemini reports none).
func geminiEmbedUpstream(t *testing.T, model string) *mockUpstream {
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Requests []struct {
				Model   string
				Content struct{ Parts []struct{ Text string } }
			}
		}
		if r.URL.Path != "/v1beta/models/"+model+":batchEmbedContents" || r.Header.Get("x-goog-api-key") != upstreamKey ||
			json.Unmarshal(body, &req) != nil {
			jsonReply(404, []byte(`{"error":{"code":404,"message":"bad path, auth or body","status":"NOT_FOUND"}}`))(w, r, body)
			return
		}
		var out []string
		for i, q := range req.Requests {
			if q.Model != "models/"+model {
				jsonReply(400, []byte(`{"error":{"code":400,"message":"model mismatch","status":"INVALID_ARGUMENT"}}`))(w, r, body)
				return
			}
			out = append(out, fmt.Sprintf(`{"values":[%g,-1,%d]}`, float64(i)+0.5, len(q.Content.Parts[0].Text)))
		}
		jsonReply(200, []byte(`{"embeddings":[`+strings.Join(out, ",")+`]}`))(w, r, body)
	})
}

// embedChannel is the YAML of a Gemini channel at up whose public model
// embed-x is gemini-embedding-001 upstream.
func embedChannel(name string, up *mockUpstream, extra string) string {
	return "  - {name: " + name + ", type: gemini, base_url: \"" + up.srv.URL + "\", api_keys: [" + upstreamKey + "], " +
		"model_map: {embed-x: gemini-embedding-001}" + extra + "}\n"
}

// TestOpenAIEmbeddingsToGemini drives /v1/embeddings with the official
// OpenAI client to a Gemini channel: the upstream gets batchEmbedContents
// of its own model with the channel's key, a request per text; the client
// gets OpenAI's list under the public name, as floats or as base64, with
// the gateway's estimate of the prompt tokens, said to be one.
func TestOpenAIEmbeddingsToGemini(t *testing.T) {
	up := geminiEmbedUpstream(t, "gemini-embedding-001")
	tg := startGateway(t, embedChannel("ge", up, ""))
	client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(openKey), option.WithMaxRetries(0))
	params := openai.EmbeddingNewParams{
		Model: "embed-x", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"hello", "wide world"}},
		Dimensions: openai.Int(3),
	}
	want := [][]float64{{0.5, -1, 5}, {1.5, -1, 10}}

	var resp *http.Response
	e, err := client.Embeddings.New(context.Background(), params, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	got := up.lastRequest()
	const sent = `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"hello"}]},"outputDimensionality":3},` +
		`{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"wide world"}]},"outputDimensionality":3}]}`
	if got.path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || got.header.Get("x-goog-api-key") != upstreamKey ||
		got.header.Get("Authorization") != "" || string(got.body) != sent {
		t.Fatalf("upstream got %s %v\n%s", got.path, got.header, got.body)
	}
	if e.Model != "embed-x" || e.Object != "list" || len(e.Data) != 2 || e.Data[1].Index != 1 || e.Data[1].Object != "embedding" {
		t.Fatalf("embeddings %+v", e)
	}
	for i, d := range e.Data {
		if fmt.Sprint(d.Embedding) != fmt.Sprint(want[i]) {
			t.Errorf("vector %d: %v, want %v", i, d.Embedding, want[i])
		}
	}
	if e.Usage.PromptTokens != 3 || e.Usage.TotalTokens != 3 || resp.Header.Get("X-Rosetta-Token-Count") != "estimate" {
		t.Errorf("usage %+v, %q", e.Usage, resp.Header.Get("X-Rosetta-Token-Count"))
	}

	params.EncodingFormat = openai.EmbeddingNewParamsEncodingFormatBase64
	e, err = client.Embeddings.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if string(up.lastRequest().body) != sent {
		t.Errorf("base64 asked upstream: %s", up.lastRequest().body)
	}
	for i, d := range e.Data {
		var s string
		if err := json.Unmarshal([]byte(d.JSON.Embedding.Raw()), &s); err != nil {
			t.Fatalf("vector %d is not base64: %s", i, d.JSON.Embedding.Raw())
		}
		if v := decodeVector(t, s); fmt.Sprint(v) != fmt.Sprint(want[i]) {
			t.Errorf("vector %d: %v, want %v", i, v, want[i])
		}
	}
	waitFor(t, "the access log's estimated usage", func() bool {
		for _, l := range tg.accessLines(t) {
			if l["endpoint"] == "embeddings" && l["channel"] == "ge" && l["input_tokens"] == 3.0 && l["estimated"] == true {
				return true
			}
		}
		return false
	})
}

// TestEmbeddingsErrorsOpenAIStyle: an OpenAI client's embeddings fail over
// from a Gemini channel that answers 500 to the next; an unknown model is
// a 503, and token ids for a model only Gemini channels serve a 400 that
// says Gemini takes text, both in OpenAI's shape, the upstream not called.
func TestEmbeddingsErrorsOpenAIStyle(t *testing.T) {
	bad := newMock(t, jsonReply(500, []byte(`{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`)))
	good := geminiEmbedUpstream(t, "gemini-embedding-001")
	tg := startGateway(t, embedChannel("bad", bad, ", priority: 0")+embedChannel("good", good, ", priority: 1"))
	resp, got := tg.do(t, "POST", "/v1/embeddings", openKey, `{"model":"embed-x","input":"hi"}`)
	if resp.StatusCode != 200 || bad.hits.Load() != 1 || good.hits.Load() != 1 || !strings.Contains(string(got), `"embedding":[0.5,-1,2]`) {
		t.Fatalf("%d (bad %d, good %d) %s", resp.StatusCode, bad.hits.Load(), good.hits.Load(), got)
	}

	resp, got = tg.do(t, "POST", "/v1/embeddings", openKey, `{"model":"nope","input":"hi"}`)
	checkError(t, resp, got, 503, "model_not_found")
	resp, got = tg.do(t, "POST", "/v1/embeddings", openKey, `{"model":"embed-x","input":[[9906,1917]]}`)
	checkError(t, resp, got, 400, "")
	if !strings.Contains(string(got), "take text") || !strings.Contains(string(got), `"param":"input"`) {
		t.Errorf("token ids: %s", got)
	}
	if bad.hits.Load() != 1 || good.hits.Load() != 1 {
		t.Fatalf("upstreams called again: bad %d, good %d", bad.hits.Load(), good.hits.Load())
	}
}

// genaiClient is the official Gemini client of the gateway, with key.
func genaiClient(t *testing.T, tg *testGateway, key string) *genai.Client {
	t.Helper()
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: key, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: tg.url},
	})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// geminiPost posts body to a Gemini method of the gateway with the key in
// the query, and reads the JSON answer.
func (tg *testGateway) geminiPost(t *testing.T, target, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, got := tg.send(t, "POST", "/v1beta/models/"+target+"?key="+openKey, nil, body)
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatalf("%s: %d %s", target, resp.StatusCode, got)
	}
	return resp, m
}

// TestGeminiEmbeddings drives embedContent (genai's EmbedContent calls
// batchEmbedContents) to a Gemini channel, which gets the client's batch
// with its own model in each request, and to an OpenAI channel, which gets
// /embeddings; embedContent itself goes to a Gemini channel as a batch of
// one and comes back as one embedding.
func TestGeminiEmbeddings(t *testing.T) {
	ge, oa := geminiEmbedUpstream(t, "gemini-embedding-001"), endpointsUpstream(t)
	tg := startGateway(t, embedChannel("ge", ge, "")+"  - {name: oa, type: openai, base_url: \""+oa.baseURL()+
		"\", api_keys: ["+upstreamKey+"], model_map: {gpt-embed: text-embedding-3-small}}\n")
	client := genaiClient(t, tg, openKey)
	dims := int32(4)
	texts := []*genai.Content{genai.NewContentFromText("hello", genai.RoleUser), genai.NewContentFromText("world", genai.RoleUser)}
	config := &genai.EmbedContentConfig{TaskType: "RETRIEVAL_QUERY", OutputDimensionality: &dims}

	t.Run("gemini channel", func(t *testing.T) {
		res, err := client.Models.EmbedContent(context.Background(), "embed-x", texts, config)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Embeddings) != 2 || fmt.Sprint(res.Embeddings[1].Values) != "[1.5 -1 5]" {
			t.Fatalf("embeddings %+v", res.Embeddings)
		}
		got := ge.lastRequest()
		var sent struct {
			Requests []struct {
				Model, TaskType      string
				OutputDimensionality int
				Content              struct{ Parts []struct{ Text string } }
			}
		}
		if got.path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || got.header.Get("x-goog-api-key") != upstreamKey ||
			json.Unmarshal(got.body, &sent) != nil || len(sent.Requests) != 2 || strings.Contains(string(got.body), "embed-x") {
			t.Fatalf("upstream got %s %v\n%s", got.path, got.header, got.body)
		}
		for i, r := range sent.Requests {
			if r.Model != "models/gemini-embedding-001" || r.TaskType != "RETRIEVAL_QUERY" || r.OutputDimensionality != 4 ||
				r.Content.Parts[0].Text != texts[i].Parts[0].Text {
				t.Errorf("request %d: %+v", i, r)
			}
		}
		// Byte for byte but for the model, which goes where a request
		// has none.
		body := `{"requests":[{"model":"models/embed-x", "content":{"parts":[{"text":"a"}]},"task_type":"CLUSTERING"},` +
			`{"content":{"parts":[{"text":"bc"}]}}] }`
		resp, m := tg.geminiPost(t, "embed-x:batchEmbedContents", body)
		if resp.StatusCode != 200 || fmt.Sprint(m) != "map[embeddings:[map[values:[0.5 -1 1]] map[values:[1.5 -1 2]]]]" {
			t.Fatalf("%d %v", resp.StatusCode, m)
		}
		want := strings.ReplaceAll(body, "models/embed-x", "models/gemini-embedding-001")
		want = strings.Replace(want, `{"content"`, `{"model":"models/gemini-embedding-001","content"`, 1)
		if got := string(ge.lastRequest().body); got != want {
			t.Fatalf("upstream got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("openai channel", func(t *testing.T) {
		res, err := client.Models.EmbedContent(context.Background(), "gpt-embed", texts, config)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Embeddings) != 2 || res.Embeddings[1].Values[0] != 0.0023064255 || len(res.Embeddings[0].Values) != 4 {
			t.Fatalf("embeddings %+v", res.Embeddings)
		}
		got := oa.lastRequest()
		const sent = `{"model":"text-embedding-3-small","input":["hello","world"],"dimensions":4}`
		if got.path != "/v1/embeddings" || got.header.Get("Authorization") != "Bearer "+upstreamKey || string(got.body) != sent {
			t.Fatalf("upstream got %s %v\n%s", got.path, got.header, got.body)
		}
	})
	t.Run("embedContent", func(t *testing.T) {
		resp, m := tg.geminiPost(t, "embed-x:embedContent",
			`{"content":{"parts":[{"text":"hi"}]},"taskType":"RETRIEVAL_DOCUMENT","title":"Doc","outputDimensionality":3}`)
		if resp.StatusCode != 200 || fmt.Sprint(m) != "map[embedding:map[values:[0.5 -1 2]]]" || resp.Header.Get("X-Rosetta-Token-Count") != "estimate" {
			t.Fatalf("%d %v", resp.StatusCode, m)
		}
		const sent = `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"hi"}]},` +
			`"taskType":"RETRIEVAL_DOCUMENT","title":"Doc","outputDimensionality":3}]}`
		if got := ge.lastRequest(); got.path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || string(got.body) != sent {
			t.Fatalf("upstream got %s\n%s", got.path, got.body)
		}
	})
}

// TestEmbeddingsErrorsGeminiStyle: a Gemini client's embeddings fail over
// from a channel that answers 500 to the next; an unknown model is a 503, a
// body without content, or of the other method, a 400, and a missing key a
// 401, all in Gemini's shape, with no upstream called.
func TestEmbeddingsErrorsGeminiStyle(t *testing.T) {
	bad := newMock(t, jsonReply(500, []byte(`{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`)))
	good := geminiEmbedUpstream(t, "gemini-embedding-001")
	tg := startGateway(t, embedChannel("bad", bad, ", priority: 0")+embedChannel("good", good, ", priority: 1"))
	res, err := genaiClient(t, tg, openKey).Models.EmbedContent(context.Background(), "embed-x", genai.Text("hi"), nil)
	if err != nil || len(res.Embeddings) != 1 || bad.hits.Load() != 1 || good.hits.Load() != 1 {
		t.Fatalf("%v %+v (bad %d, good %d)", err, res, bad.hits.Load(), good.hits.Load())
	}

	one := `{"content":{"parts":[{"text":"hi"}]}}`
	for _, c := range []struct {
		target, body string
		status       int
	}{
		{"nope:batchEmbedContents", `{"requests":[` + one + `]}`, 503},
		{"nope:embedContent", one, 503},
		{"embed-x:embedContent", `{"taskType":"RETRIEVAL_QUERY"}`, 400},
		{"embed-x:batchEmbedContents", `{"requests":[]}`, 400},
		{"embed-x:batchEmbedContents", `{"requests":[{"content":{"parts":[{"text":7}]}}]}`, 400},
		{"embed-x:batchEmbedContents", one, 400},
		{"embed-x:embedContent", `{"requests":[` + one + `]}`, 400},
	} {
		resp, m := tg.geminiPost(t, c.target, c.body)
		geminiErr(t, resp.StatusCode, m, c.status)
	}
	resp, got := tg.send(t, "POST", "/v1beta/models/embed-x:embedContent", nil, one)
	var m map[string]any
	json.Unmarshal(got, &m)
	geminiErr(t, resp.StatusCode, m, 401)
	if bad.hits.Load() != 1 || good.hits.Load() != 1 {
		t.Fatalf("upstreams called again: bad %d, good %d", bad.hits.Load(), good.hits.Load())
	}
}

// TestDemoGeminiEmbeddings: the demo channel (OpenAI-compatible) answers
// Gemini's embedding methods too, through the translation: one unit vector
// per text, one text one vector, with the asked dimensions.
func TestDemoGeminiEmbeddings(t *testing.T) {
	tg := startGateway(t, "  - {name: demo, type: demo, models: [demo], pace: 1ms}\n")
	dims := int32(8)
	res, err := genaiClient(t, tg, clientKey).Models.EmbedContent(context.Background(), "demo",
		[]*genai.Content{genai.NewContentFromText("hello", genai.RoleUser), genai.NewContentFromText("world", genai.RoleUser)},
		&genai.EmbedContentConfig{OutputDimensionality: &dims})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Embeddings) != 2 || len(res.Embeddings[0].Values) != 8 || fmt.Sprint(res.Embeddings[0].Values) == fmt.Sprint(res.Embeddings[1].Values) {
		t.Fatalf("embeddings %+v", res.Embeddings)
	}
	norm := 0.0
	for _, x := range res.Embeddings[0].Values {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("not a unit vector: %v", res.Embeddings[0].Values)
	}
	resp, got := tg.send(t, "POST", "/v1beta/models/demo:embedContent", map[string]string{"x-goog-api-key": clientKey},
		`{"content":{"parts":[{"text":"hello"}]},"outputDimensionality":8}`)
	var one struct{ Embedding struct{ Values []float32 } }
	if resp.StatusCode != 200 || json.Unmarshal(got, &one) != nil || fmt.Sprint(one.Embedding.Values) != fmt.Sprint(res.Embeddings[0].Values) {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
}
