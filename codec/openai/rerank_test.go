package openai

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
)

func TestDecodeRerankRequest(t *testing.T) {
	doc := func(text string) codec.Document { return codec.Document{Text: text} }
	for _, c := range []struct {
		body  string
		want  *codec.Rerank
		param string // of the error, "-" for none
	}{
		{`{"model":"m","query":"q","documents":["a","b\n"]}`,
			&codec.Rerank{Query: "q", Documents: []codec.Document{doc("a"), doc("b\n")}}, "-"},
		{`{"model":"m","query":"q","documents":[{"text":"a","id":7}, {"title":"t"}],"top_n":1,"return_documents":true,"max_tokens_per_doc":512}`,
			&codec.Rerank{Query: "q", Documents: []codec.Document{{Text: "a", Object: `{"text":"a","id":7}`}, {Object: `{"title":"t"}`}},
				TopN: 1, ReturnDocuments: true, MaxTokensPerDoc: 512}, "-"},
		{`{"model":"m","query":"","documents":["a"],"top_n":null,"return_documents":null}`,
			&codec.Rerank{Documents: []codec.Document{doc("a")}}, "-"},
		{`{"model":"m","documents":["a"]}`, nil, "query"},
		{`{"model":"m","query":7,"documents":["a"]}`, nil, "query"},
		{`{"model":"m","query":"q"}`, nil, "documents"},
		{`{"model":"m","query":"q","documents":[]}`, nil, "documents"},
		{`{"model":"m","query":"q","documents":"a"}`, nil, "documents"},
		{`{"model":"m","query":"q","documents":["a",3]}`, nil, "documents"},
		{`{"model":"m","query":"q","documents":[["a"]]}`, nil, "documents"},
		{`{"model":"m","query":"q","documents":[null]}`, nil, "documents"},
		{`{"model":"m","query":"q","documents":["a"],"top_n":0}`, nil, "top_n"},
		{`{"model":"m","query":"q","documents":["a"],"top_n":-2}`, nil, "top_n"},
		{`{"model":"m","query":"q","documents":["a"],"top_n":1.5}`, nil, "top_n"},
		{`{"model":"m","query":"q","documents":["a"],"top_n":"3"}`, nil, "top_n"},
		{`{"model":"m","query":"q","documents":["a"],"max_tokens_per_doc":0}`, nil, "max_tokens_per_doc"},
		{`{"model":"m","query":"q","documents":["a"],"return_documents":"yes"}`, nil, "return_documents"},
		{`{"query":"q","documents":["a"]}`, nil, "model"},
		{`{"model":"","query":"q","documents":["a"]}`, nil, "model"},
		{`{"model":"m","model":"n","query":"q","documents":["a"]}`, nil, ""},
		{`{"model":"m","query":"q","documents":["a"]`, nil, ""},
		{`["m"]`, nil, ""},
	} {
		var r codec.Request
		e := DecodeRerankRequest([]byte(c.body), &r)
		switch {
		case c.param == "-" && e != nil:
			t.Errorf("%s: %v", c.body, e)
		case c.param == "-" && (r.Model != "m" || !reflect.DeepEqual(r.Rerank, c.want)):
			t.Errorf("%s: %q %+v, want %+v", c.body, r.Model, r.Rerank, c.want)
		case c.param != "-" && (e == nil || e.Status != 400 || e.Param != c.param):
			t.Errorf("%s: error %+v, want one on %q", c.body, e, c.param)
		}
	}
}

// TestRerankRequestRoundTrip: a request appended reads back as it was,
// objects kept byte for byte.
func TestRerankRequestRoundTrip(t *testing.T) {
	in := `{"model":"m","query":"what \"is\" it","documents":["a",{"text":"b","n":[1,2]}],"top_n":2,"return_documents":true,"max_tokens_per_doc":9}`
	var r, back codec.Request
	if e := DecodeRerankRequest([]byte(in), &r); e != nil {
		t.Fatal(e)
	}
	out, e := AppendRerankRequest(nil, &r)
	if e != nil || string(out) != in {
		t.Fatalf("%s, %v\nwant %s", out, e, in)
	}
	if e := DecodeRerankRequest(out, &back); e != nil || !reflect.DeepEqual(back.Rerank, r.Rerank) {
		t.Fatalf("read back %+v, %v", back.Rerank, e)
	}
	if _, e := AppendRerankRequest(nil, &codec.Request{Model: "m"}); e == nil {
		t.Fatal("a request with no rerank appended")
	}
}

// TestAppendRerankResponse: the documents come back only when asked, a
// string as {"text": …} and an object as the client sent it; usage only
// when tokens were reported; the meta as the upstream sent it.
func TestAppendRerankResponse(t *testing.T) {
	req := &codec.Request{Rerank: &codec.Rerank{Documents: []codec.Document{{Text: "a"}, {Text: "b", Object: `{"text":"b","id":1}`}}}}
	resp := &codec.Response{Ranking: &codec.Ranking{Results: []codec.Ranked{{Index: 1, Score: 0.5}, {Index: 0, Score: 1e-7}},
		Meta: `{"billed_units":{"search_units":1}}`}}
	info := codec.StreamInfo{ID: "gw-1", Model: "public", Request: req}
	want := `{"id":"gw-1","model":"public","results":[{"index":1,"relevance_score":0.5},{"index":0,"relevance_score":1e-07}],` +
		`"meta":{"billed_units":{"search_units":1}}}`
	if got := AppendRerankResponse(nil, resp, info); string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	req.Rerank.ReturnDocuments = true
	resp.ID, resp.Usage, resp.Ranking.Meta = "up-1", codec.Usage{Input: 12}, ""
	want = `{"id":"up-1","model":"public","results":[{"index":1,"relevance_score":0.5,"document":{"text":"b","id":1}},` +
		`{"index":0,"relevance_score":1e-07,"document":{"text":"a"}}],"usage":{"prompt_tokens":12,"total_tokens":12}}`
	got := AppendRerankResponse(nil, resp, info)
	if string(got) != want || !json.Valid(got) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func FuzzRerankRequest(f *testing.F) {
	for _, s := range []string{`{"model":"m","query":"q","documents":["a",{"text":"b"}],"top_n":1}`,
		`{"model":"m","query":"q","documents":[{"text":7}],"return_documents":true,"max_tokens_per_doc":3}`,
		`{"model":"m","query":"\u00e9","documents":["\ud800"]}`, `{"model":"m","query":"q","documents":[1]}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r, back codec.Request
		if e := DecodeRerankRequest(body, &r); e != nil {
			if e.Status != 400 {
				t.Fatalf("status %d", e.Status)
			}
			return
		}
		rr := r.Rerank
		if r.Model == "" || rr == nil || len(rr.Documents) == 0 || rr.TopN < 0 || rr.MaxTokensPerDoc < 0 || !json.Valid(body) {
			t.Fatalf("accepted %q as %+v", body, rr)
		}
		out, e := AppendRerankRequest(nil, &r)
		if e != nil || !json.Valid(out) {
			t.Fatalf("appended %q: %v", out, e)
		}
		want := validUTF8(*rr) // strings are written as encoding/json writes them
		if e := DecodeRerankRequest(out, &back); e != nil || !reflect.DeepEqual(*back.Rerank, want) ||
			back.Model != goldentest.AsEncoded(r.Model) {
			t.Fatalf("%q read back as %+v (%v), want %+v", out, back.Rerank, e, want)
		}
	})
}

// validUTF8 is rr with its strings' invalid UTF-8 replaced by U+FFFD, as
// encoding them does; a document object is relayed as it came.
func validUTF8(rr codec.Rerank) codec.Rerank {
	rr.Query = goldentest.AsEncoded(rr.Query)
	rr.Documents = slices.Clone(rr.Documents)
	for i, d := range rr.Documents {
		if d.Object == "" {
			rr.Documents[i].Text = goldentest.AsEncoded(d.Text)
		}
	}
	return rr
}
