package openai

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

func TestDecodeEmbeddingsRequest(t *testing.T) {
	req := func(model, user string, e codec.Embed) codec.Request {
		return codec.Request{Model: model, User: user, Embed: e}
	}
	for _, c := range []struct {
		body  string
		want  codec.Request
		param string // of the error, "-" for none
	}{
		{`{"model":"m","input":"hi"}`, req("m", "", codec.Embed{Texts: []string{"hi"}}), "-"},
		{`{"model":"m","input":["a","b"],"encoding_format":"base64","dimensions":8,"user":"u"}`,
			req("m", "u", codec.Embed{Texts: []string{"a", "b"}, Base64: true, Dimensions: 8}), "-"},
		{`{"model":"m","input":[1,2,3]}`, req("m", "", codec.Embed{Tokens: [][]int{{1, 2, 3}}}), "-"},
		{`{"model":"m","input":[[1],[2,3]]}`, req("m", "", codec.Embed{Tokens: [][]int{{1}, {2, 3}}}), "-"},
		{`{"model":"m","input":"x","encoding_format":"float"}`, req("m", "", codec.Embed{Texts: []string{"x"}}), "-"},
		{`{"model":"m"}`, codec.Request{}, "input"},
		{`{"model":"m","input":[]}`, codec.Request{}, "input"},
		{`{"model":"m","input":[1,"a"]}`, codec.Request{}, "input"},
		{`{"model":"m","input":{"a":1}}`, codec.Request{}, "input"},
		{`{"input":"x"}`, codec.Request{}, "model"},
		{`{"model":"m","input":"x","encoding_format":"hex"}`, codec.Request{}, "encoding_format"},
		{`{"model":"m","input":"x","dimensions":-1}`, codec.Request{}, "dimensions"},
		{`{"model":"m","input":"x"`, codec.Request{}, ""},
	} {
		var r codec.Request
		e := DecodeEmbeddingsRequest([]byte(c.body), &r)
		switch {
		case c.param == "-" && e != nil:
			t.Errorf("%s: %v", c.body, e)
		case c.param == "-" && !reflect.DeepEqual(r, c.want):
			t.Errorf("%s: %+v, want %+v", c.body, r, c.want)
		case c.param != "-" && (e == nil || e.Status != 400 || e.Param != c.param):
			t.Errorf("%s: error %+v, want one on %q", c.body, e, c.param)
		}
	}
}

// TestAppendEmbeddings: the vectors read back exactly, as numbers and as
// base64, and the response is what OpenAI's clients parse.
func TestAppendEmbeddings(t *testing.T) {
	vs := [][]float32{{0.5, -1, 1e-7, float32(math.Pi)}, {0, 3.4028235e38, -1.17549435e-38, 0.1}}
	for _, b64 := range []bool{false, true} {
		out := AppendEmbeddings(nil, "text-embedding-3-small", vs, b64, codec.Usage{Input: 9})
		var r struct {
			Object string
			Data   []struct {
				Object    string
				Index     int
				Embedding json.RawMessage
			}
			Model string
			Usage struct{ PromptTokens, TotalTokens int } `json:"usage"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if r.Object != "list" || r.Model != "text-embedding-3-small" || len(r.Data) != 2 || r.Data[1].Index != 1 ||
			r.Data[0].Object != "embedding" {
			t.Fatalf("%s", out)
		}
		for i, d := range r.Data {
			var got []float32
			if b64 {
				var s string
				json.Unmarshal(d.Embedding, &s)
				raw, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					t.Fatal(err)
				}
				for j := 0; j+4 <= len(raw); j += 4 {
					got = append(got, math.Float32frombits(binary.LittleEndian.Uint32(raw[j:])))
				}
			} else {
				var nums []json.Number
				if err := json.Unmarshal(d.Embedding, &nums); err != nil {
					t.Fatal(err)
				}
				for _, n := range nums {
					f, _ := strconv.ParseFloat(n.String(), 32)
					got = append(got, float32(f))
				}
			}
			if !reflect.DeepEqual(got, vs[i]) {
				t.Errorf("base64 %v: vector %d read back %v, want %v", b64, i, got, vs[i])
			}
		}
	}
}

func FuzzEmbeddingsRequest(f *testing.F) {
	for _, s := range []string{`{"model":"m","input":"hi"}`, `{"model":"m","input":[[1],[2]],"encoding_format":"base64"}`,
		`{"model":"m","input":[1,"a"]}`, `{"model":"","input":null}`, `[]`, `{"model":"m","input":["\u0000"],"dimensions":1e3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r codec.Request
		if e := DecodeEmbeddingsRequest(body, &r); e != nil {
			if e.Status != 400 {
				t.Fatalf("status %d", e.Status)
			}
			return
		}
		if r.Model == "" || len(r.Embed.Texts)+len(r.Embed.Tokens) == 0 || r.Embed.Dimensions < 0 || !json.Valid(body) {
			t.Fatalf("accepted %q as %+v", body, r)
		}
	})
}

// TestEmbeddingsRequestRoundTrip: the body the encoder writes for an
// upstream decodes back to the request, Gemini's hints aside (dropped).
func TestEmbeddingsRequestRoundTrip(t *testing.T) {
	for _, r := range []codec.Request{
		{Model: "m", User: "u", Embed: codec.Embed{Texts: []string{"a", "\"b\"\n"}, Dimensions: 8, TaskType: "RETRIEVAL_QUERY", Title: "t"}},
		{Model: "m", Embed: codec.Embed{Tokens: [][]int{{1, 2}, {3}}}},
	} {
		out, dropped := AppendEmbeddingsRequest(nil, &r)
		var back codec.Request
		if e := DecodeEmbeddingsRequest(out, &back); e != nil {
			t.Fatalf("%s: %v", out, e)
		}
		want := r
		want.Embed.TaskType, want.Embed.Title = "", ""
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%s read back as %+v", out, back)
		}
		if r.Embed.Title != "" && !reflect.DeepEqual(dropped, []string{"task_type", "title"}) {
			t.Errorf("dropped %v", dropped)
		}
	}
}

func TestDecodeEmbeddingsResponse(t *testing.T) {
	b64 := string(AppendVectorBase64(nil, []float32{0.5, -2}))
	for _, c := range []struct {
		body string
		want [][]float32 // nil: an error
		in   int
	}{
		{`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,1e-3]}],"model":"m","usage":{"prompt_tokens":3,"total_tokens":3}}`,
			[][]float32{{0.25, 1e-3}}, 3},
		{`{"data":[{"index":1,"embedding":` + b64 + `},{"index":0,"embedding":[]}]}`, [][]float32{{}, {0.5, -2}}, 0},
		{`{"data":[{"index":1,"embedding":[1]}]}`, nil, 0},
		{`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`, nil, 0},
		{`{"data":[{"index":0,"embedding":"not base64!"}]}`, nil, 0},
		{`{"data":[{"index":0,"embedding":{"a":1}}]}`, nil, 0},
		{`{"data":[{"index":0,"embedding":[1]}],"usage":{"prompt_tokens":"x"}}`, nil, 0},
		{`{"data":`, nil, 0},
	} {
		var r codec.Response
		err := DecodeEmbeddingsResponse([]byte(c.body), &r)
		switch {
		case c.want == nil && err == nil:
			t.Errorf("%s: read as %v", c.body, r.Vectors)
		case c.want != nil && (err != nil || !reflect.DeepEqual(r.Vectors, c.want) || r.Usage.Input != c.in):
			t.Errorf("%s: %v %v (usage %d)", c.body, err, r.Vectors, r.Usage.Input)
		}
	}
}

func FuzzEmbeddingsResponse(f *testing.F) {
	for _, s := range []string{`{"data":[{"index":0,"embedding":[0.5,1]}],"usage":{"prompt_tokens":2}}`,
		`{"data":[{"index":1,"embedding":"AAAAPw=="},{"index":0,"embedding":[]}]}`, `{"data":[{"index":-1}]}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r codec.Response
		if DecodeEmbeddingsResponse(body, &r) != nil {
			return
		}
		for i, v := range r.Vectors {
			if v == nil {
				t.Fatalf("%q: no vector at %d", body, i)
			}
		}
		for _, b64 := range []bool{false, true} {
			out := AppendEmbeddings(nil, "m", r.Vectors, b64, r.Usage)
			var again codec.Response
			if err := DecodeEmbeddingsResponse(out, &again); err != nil || !reflect.DeepEqual(again.Vectors, r.Vectors) {
				t.Fatalf("%q → %s: %v", body, out, err)
			}
		}
	})
}
