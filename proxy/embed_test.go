package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
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
