package cohere_test

import (
	"encoding/json"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/cohere"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// TestServesRerankOnly: Cohere's channels have /v2/rerank and no other
// endpoint, so chat and the rest are never routed to them.
func TestServesRerankOnly(t *testing.T) {
	if got := codec.ServedEndpoints(cohere.Dialect); len(got) != 1 || got[0] != "rerank" {
		t.Fatalf("served %q", got)
	}
	if p, ok := cohere.Dialect.HTTP().Path(nil, codec.OpRerank, "m", false); !ok || string(p) != "/v2/rerank" {
		t.Fatalf("path %q %v", p, ok)
	}
	if _, _, e := cohere.Dialect.AppendRequest(codec.OpGenerate, nil, &codec.Request{}, codec.Options{}); e == nil {
		t.Fatal("a chat request was encoded")
	}
}

func TestDecodeError(t *testing.T) {
	e, ok := cohere.Dialect.DecodeError(400, []byte(`{"id":"8d0b","message":"invalid request: list of documents must not be empty"}`))
	if !ok || e.Status != 400 || e.Kind != codec.KindInvalidRequest || e.Message != "invalid request: list of documents must not be empty" {
		t.Fatalf("%+v %v", e, ok)
	}
	if _, ok := cohere.Dialect.DecodeError(500, []byte(`<html>oops</html>`)); ok {
		t.Fatal("read an HTML page as an error")
	}
	back, _ := cohere.Dialect.DecodeError(429, cohere.AppendError(nil, &codec.Error{Message: `too "many"`}))
	if back.Message != `too "many"` || back.Kind != codec.KindForStatus(429) {
		t.Fatalf("round trip %+v", back)
	}
}

// FuzzRerankResponse: whatever Cohere answers is read or refused, never a
// panic, and what is read makes a client's answer that is JSON, with each
// result and, when asked, each document that exists.
func FuzzRerankResponse(f *testing.F) {
	for _, s := range []string{`{"id":"a","results":[{"index":1,"relevance_score":0.5}],"meta":{"billed_units":{"search_units":1}}}`,
		`{"results":[{"index":0,"relevance_score":1e-9}],"meta":{"tokens":{"input_tokens":3.0}}}`,
		`{"results":[{"index":7,"relevance_score":-1}],"usage":{"total_tokens":2}}`, `{"results":null}`, `{"meta":[]}`} {
		f.Add([]byte(s))
	}
	req := &codec.Request{Rerank: &codec.Rerank{ReturnDocuments: true,
		Documents: []codec.Document{{Text: "a"}, {Text: "b", Object: `{"text":"b"}`}}}}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r codec.Response
		if cohere.Dialect.DecodeResponse(codec.OpRerank, body, &r) != nil {
			return
		}
		out := openai.Dialect.AppendResponse(codec.OpRerank, nil, &r, codec.StreamInfo{Model: "m", Request: req})
		var back struct {
			Results []struct {
				Index    int
				Document json.RawMessage
			}
		}
		if err := json.Unmarshal(out, &back); err != nil || len(back.Results) != len(r.Ranking.Results) || r.Usage.Input < 0 {
			t.Fatalf("%q → %q: %v", body, out, err)
		}
		for _, res := range back.Results {
			if (res.Index < len(req.Rerank.Documents)) != (res.Document != nil) {
				t.Fatalf("result %d with document %s", res.Index, res.Document)
			}
		}
	})
}
