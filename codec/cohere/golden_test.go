package cohere_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/cohere"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// Golden files, under testdata/:
//
//	request/<name>.in.json    an OpenAI-style client's rerank request → <name>.out.json,
//	                          the body of Cohere's v2 rerank (or → <name>.error.json
//	                          when Cohere cannot carry it)
//	response/<name>.in.json   Cohere's v2 answer to the client's <name>.request.json →
//	                          <name>.out.json, the client's answer
//
// The client's side goes through openai.Dialect, as the proxy wires it.
// go test -update rewrites the goldens; read what it writes.

// info is the StreamInfo of every response golden, but its Request.
var info = codec.StreamInfo{ID: "chatcmpl-rosetta0001", Model: "public-rerank"}

func TestGoldenRequests(t *testing.T) {
	for _, in := range glob(t, "testdata/request/*.in.json") {
		base := strings.TrimSuffix(in, ".in.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			req := clientRequest(t, in)
			out, dropped, e := cohere.Dialect.AppendRequest(codec.OpRerank, nil, req, codec.Options{})
			if len(dropped) > 0 {
				t.Errorf("dropped %q", dropped)
			}
			if e != nil {
				goldentest.Check(t, base+".error.json", goldentest.Dump(t, e))
				goldentest.CheckAbsent(t, base+".out.json")
				return
			}
			goldentest.Check(t, base+".out.json", goldentest.IndentJSON(t, out))
			goldentest.CheckAbsent(t, base+".error.json")
		})
	}
}

func TestGoldenResponses(t *testing.T) {
	for _, in := range glob(t, "testdata/response/*.in.json") {
		base := strings.TrimSuffix(in, ".in.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			var resp codec.Response
			if err := cohere.Dialect.DecodeResponse(codec.OpRerank, goldentest.Read(t, in), &resp); err != nil {
				t.Fatal(err)
			}
			i := info
			i.Request = clientRequest(t, base+".request.json")
			out := openai.Dialect.AppendResponse(codec.OpRerank, nil, &resp, i)
			goldentest.Check(t, base+".out.json", goldentest.IndentJSON(t, out))
		})
	}
}

// clientRequest reads an OpenAI-style client's rerank request.
func clientRequest(t *testing.T, path string) *codec.Request {
	t.Helper()
	var req codec.Request
	if e := openai.Dialect.DecodeRequest(codec.OpRerank, goldentest.Read(t, path), &req, codec.Options{}); e != nil {
		t.Fatalf("%s: %v", path, e)
	}
	return &req
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	paths, _ := filepath.Glob(pattern)
	if len(paths) == 0 {
		t.Fatalf("no inputs match %s", pattern)
	}
	return paths
}
