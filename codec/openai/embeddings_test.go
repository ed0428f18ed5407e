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
	for _, c := range []struct {
		body  string
		want  EmbeddingsRequest
		param string // of the error, "-" for none
	}{
		{`{"model":"m","input":"hi"}`, EmbeddingsRequest{Model: "m", Texts: []string{"hi"}}, "-"},
		{`{"model":"m","input":["a","b"],"encoding_format":"base64","dimensions":8,"user":"u"}`,
			EmbeddingsRequest{Model: "m", Texts: []string{"a", "b"}, Base64: true, Dimensions: 8, User: "u"}, "-"},
		{`{"model":"m","input":[1,2,3]}`, EmbeddingsRequest{Model: "m", Tokens: [][]int{{1, 2, 3}}}, "-"},
		{`{"model":"m","input":[[1],[2,3]]}`, EmbeddingsRequest{Model: "m", Tokens: [][]int{{1}, {2, 3}}}, "-"},
		{`{"model":"m","input":"x","encoding_format":"float"}`, EmbeddingsRequest{Model: "m", Texts: []string{"x"}}, "-"},
		{`{"model":"m"}`, EmbeddingsRequest{}, "input"},
		{`{"model":"m","input":[]}`, EmbeddingsRequest{}, "input"},
		{`{"model":"m","input":[1,"a"]}`, EmbeddingsRequest{}, "input"},
		{`{"model":"m","input":{"a":1}}`, EmbeddingsRequest{}, "input"},
		{`{"input":"x"}`, EmbeddingsRequest{}, "model"},
		{`{"model":"m","input":"x","encoding_format":"hex"}`, EmbeddingsRequest{}, "encoding_format"},
		{`{"model":"m","input":"x","dimensions":-1}`, EmbeddingsRequest{}, "dimensions"},
		{`{"model":"m","input":"x"`, EmbeddingsRequest{}, ""},
	} {
		var r EmbeddingsRequest
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
		var r EmbeddingsRequest
		if e := DecodeEmbeddingsRequest(body, &r); e != nil {
			if e.Status != 400 {
				t.Fatalf("status %d", e.Status)
			}
			return
		}
		if r.Model == "" || r.Inputs() == 0 || r.Dimensions < 0 || !json.Valid(body) {
			t.Fatalf("accepted %q as %+v", body, r)
		}
	})
}
