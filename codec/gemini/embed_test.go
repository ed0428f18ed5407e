package gemini_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
)

func TestDecodeEmbedRequest(t *testing.T) {
	for _, c := range []struct {
		body  string
		want  codec.Embed
		param string // of the error, "-" for none
	}{
		{`{"content":{"parts":[{"text":"hi"}]},"taskType":"RETRIEVAL_DOCUMENT","title":"Doc","outputDimensionality":8}`,
			codec.Embed{Texts: []string{"hi"}, TaskType: "RETRIEVAL_DOCUMENT", Title: "Doc", Dimensions: 8, Single: true}, "-"},
		{`{"model":"models/m","content":{"role":"user","parts":[{"text":"a"},{"text":"b"}]}}`,
			codec.Embed{Texts: []string{"a\nb"}, Single: true}, "-"},
		{`{"requests":[{"model":"models/m","content":{"parts":[{"text":"a"}]},"task_type":"RETRIEVAL_QUERY","output_dimensionality":"4"},` +
			`{"model":"models/m","content":{"parts":{"text":"b"}},"title":"T","outputDimensionality":4}]}`,
			codec.Embed{Texts: []string{"a", "b"}, TaskType: "RETRIEVAL_QUERY", Title: "T", Dimensions: 4}, "-"},
		{`{}`, codec.Embed{}, "content"},
		{`{"taskType":"RETRIEVAL_QUERY"}`, codec.Embed{}, "content"},
		{`{"content":"hi"}`, codec.Embed{}, "content"},
		{`{"content":{"parts":[]}}`, codec.Embed{}, "content.parts"},
		{`{"content":{"parts":[{"text":7}]}}`, codec.Embed{}, "content.parts.text"},
		{`{"content":{"parts":[{"text":"a"},{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}}`, codec.Embed{}, "content.parts[1]"},
		{`{"content":{"parts":[{"text":"a"}]},"outputDimensionality":-1}`, codec.Embed{}, "outputDimensionality"},
		{`{"content":{"parts":[{"text":"a"}]},"taskType":1}`, codec.Embed{}, "taskType"},
		{`{"requests":[]}`, codec.Embed{}, "requests"},
		{`{"requests":[{"content":{"parts":[{"text":"a"}]}},{"model":"models/m"}]}`, codec.Embed{}, "requests[1].content"},
		{`{"requests":[{"content":{"parts":[{"text":"a"}]}},"b"]}`, codec.Embed{}, "requests[1]"},
		{`{"requests":[{"content":{"parts":[{"text":"a"}]}},{"content":{"parts":[{"text":"b"}]},"outputDimensionality":3}]}`,
			codec.Embed{}, "requests[1].outputDimensionality"},
		{`{"requests":[{"content":{"parts":[{"text":"a"}]}}],"content":{"parts":[{"text":"b"}]}}`, codec.Embed{}, "content"},
		{`{"content":{"parts":[{"text":"a"}]}`, codec.Embed{}, ""},
		{`[]`, codec.Embed{}, ""},
	} {
		var r codec.Request
		e := gemini.DecodeEmbedRequest([]byte(c.body), &r)
		switch {
		case c.param == "-" && e != nil:
			t.Errorf("%s: %v", c.body, e)
		case c.param == "-" && !reflect.DeepEqual(r.Embed, c.want):
			t.Errorf("%s: %+v, want %+v", c.body, r.Embed, c.want)
		case c.param != "-" && (e == nil || e.Status != 400 || e.Param != c.param || e.Message == ""):
			t.Errorf("%s: error %+v, want one on %q", c.body, e, c.param)
		}
	}
}

// TestAppendEmbedRequest: a request goes to Gemini as a batch, one request
// per text, each naming the model; token ids are refused.
func TestAppendEmbedRequest(t *testing.T) {
	r := codec.Request{Model: "gemini-embedding-001", User: "u",
		Embed: codec.Embed{Texts: []string{"a", "b\n"}, TaskType: "RETRIEVAL_DOCUMENT", Title: "T", Dimensions: 8, Single: true}}
	out, dropped, err := gemini.AppendEmbedRequest(nil, &r)
	want := `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]},"taskType":"RETRIEVAL_DOCUMENT","title":"T","outputDimensionality":8},` +
		`{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"b\n"}]},"taskType":"RETRIEVAL_DOCUMENT","title":"T","outputDimensionality":8}]}`
	if err != nil || string(out) != want || !reflect.DeepEqual(dropped, []string{gemini.NoteUser}) {
		t.Fatalf("%s %v %v", out, dropped, err)
	}
	var back codec.Request
	if e := gemini.DecodeEmbedRequest(out, &back); e != nil {
		t.Fatal(e)
	}
	if r.Embed.Single = false; !reflect.DeepEqual(back.Embed, r.Embed) {
		t.Errorf("read back as %+v", back.Embed)
	}
	r.Embed = codec.Embed{Tokens: [][]int{{1, 2}}}
	if _, _, err := gemini.AppendEmbedRequest(nil, &r); err == nil || err.Status != 400 || !strings.Contains(err.Message, "text") {
		t.Errorf("token ids: %v", err)
	}
}

func TestAppendBatchModel(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"requests":[{"model":"models/public","content":{"parts":[{"text":"a"}]}}, {"content":{}, "model" : "x"}]}`,
			`{"requests":[{"model":"models/up/x","content":{"parts":[{"text":"a"}]}}, {"content":{}, "model" : "models/up/x"}]}`},
		{`{"requests":[{"content":{"parts":[{"text":"a"}]}},{ },{"model":"a","model":"b"}]}`,
			`{"requests":[{"model":"models/up/x","content":{"parts":[{"text":"a"}]}},{"model":"models/up/x" },{"model":"models/up/x","model":"models/up/x"}]}`},
		{`{"contents":[{"parts":[{"text":"requests"}]}]}`, ""},
		{`{"requests":[]}`, ""},
		{`{"requests":[{"model":"a"}]`, ""},
	} {
		out, ok := gemini.AppendBatchModel([]byte("x"), []byte(c.in), "models/up/x")
		if c.want == "" {
			if ok || string(out) != "x" {
				t.Errorf("%s: %s %v", c.in, out, ok)
			}
			continue
		}
		if !ok || string(out) != "x"+c.want {
			t.Errorf("%s:\n got %s\nwant x%s", c.in, out, c.want)
		}
	}
	// The pass-through path: a batch gets the model, other bodies go as
	// they are.
	body := []byte(`{"requests":[{"model":"models/public","content":{"parts":[{"text":"a"}]}}]}`)
	if out := gemini.Dialect.AppendModelRequest(nil, body, "m"); !strings.Contains(string(out), `"model":"models/m"`) {
		t.Errorf("%s", out)
	}
	gen := []byte(`{"contents":[{"parts":[{"text":"requests"}]}]}`)
	if out := gemini.Dialect.AppendModelRequest(nil, gen, "m"); string(out) != string(gen) {
		t.Errorf("%s", out)
	}
}

func TestEmbedResponse(t *testing.T) {
	var r codec.Response
	body := `{"embeddings":[{"values":[0.25,-1e-3,3]},{"values":[]}],"usageMetadata":{"promptTokenCount":7}}`
	if err := gemini.DecodeEmbedResponse([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Vectors, [][]float32{{0.25, -1e-3, 3}, {}}) || r.Usage.Input != 7 {
		t.Fatalf("%+v", r)
	}
	if out := string(gemini.AppendEmbedResponse(nil, r.Vectors, false)); out != `{"embeddings":[{"values":[0.25,-0.001,3]},{"values":[]}]}` {
		t.Errorf("batch %s", out)
	}
	if out := string(gemini.AppendEmbedResponse(nil, r.Vectors, true)); out != `{"embedding":{"values":[0.25,-0.001,3]}}` {
		t.Errorf("single %s", out)
	}
	if err := gemini.DecodeEmbedResponse([]byte(`{"embedding":{"values":[1,2]}}`), &r); err != nil ||
		!reflect.DeepEqual(r.Vectors, [][]float32{{1, 2}}) || r.Usage.Input != 0 {
		t.Errorf("single: %v %+v", err, r)
	}
	for _, bad := range []string{`{"embeddings":[{"values":["x"]}]}`, `{"embeddings":[{"values":[1e39]}]}`,
		`{"embeddings":[7]}`, `{"embeddings":[]`, `[]`, `{"usageMetadata":[]}`} {
		if err := gemini.DecodeEmbedResponse([]byte(bad), &r); err == nil {
			t.Errorf("%s: read as %+v", bad, r)
		}
	}
}

func FuzzEmbedRequest(f *testing.F) {
	for _, s := range []string{`{"content":{"parts":[{"text":"hi"}]},"taskType":"RETRIEVAL_QUERY","outputDimensionality":8}`,
		`{"requests":[{"model":"models/m","content":{"parts":[{"text":"a"},{"text":"b"}]},"title":"T"},{"content":{"parts":{"text":"c"}}}]}`,
		`{"requests":[{"content":{"parts":[{"inline_data":{}}]}}]}`, `{"content":null}`, `{"requests":{"content":{"parts":[{"text":""}]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r codec.Request
		if e := gemini.DecodeEmbedRequest(body, &r); e != nil {
			if e.Status != 400 || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if len(r.Embed.Texts) == 0 || r.Embed.Single && len(r.Embed.Texts) != 1 || r.Embed.Dimensions < 0 || !json.Valid(body) {
			t.Fatalf("accepted %q as %+v", body, r.Embed)
		}
		r.Model = "m"
		out, _, err := gemini.AppendEmbedRequest(nil, &r)
		var back codec.Request
		want := make([]string, len(r.Embed.Texts)) // texts as encoding writes them
		for i, s := range r.Embed.Texts {
			want[i] = goldentest.AsEncoded(s)
		}
		if err != nil || gemini.DecodeEmbedRequest(out, &back) != nil || !reflect.DeepEqual(back.Embed.Texts, want) {
			t.Fatalf("%q → %s: %v", body, out, err)
		}
		if r.Embed.Single {
			return
		}
		spliced, ok := gemini.AppendBatchModel(nil, body, "up")
		if !ok || gemini.DecodeEmbedRequest(spliced, &back) != nil || !reflect.DeepEqual(back.Embed, r.Embed) {
			t.Fatalf("%q spliced as %s", body, spliced)
		}
	})
}

func FuzzEmbedResponse(f *testing.F) {
	for _, s := range []string{`{"embeddings":[{"values":[0.25,-1e-3]},{"values":[]}]}`, `{"embedding":{"values":[1,"2"]}}`,
		`{"embeddings":[{"values":[1]}],"usageMetadata":{"promptTokenCount":3}}`, `{"embeddings":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r codec.Response
		if gemini.DecodeEmbedResponse(body, &r) != nil {
			return
		}
		out := gemini.AppendEmbedResponse(nil, r.Vectors, false)
		var again codec.Response
		if err := gemini.DecodeEmbedResponse(out, &again); err != nil || !reflect.DeepEqual(again.Vectors, r.Vectors) {
			t.Fatalf("%q → %s: %v", body, out, err)
		}
	})
}
