package proxy

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkUpstreamRequest builds the upstream request of a non-streamed
// chat completion as attempt does (prepare: its URL, headers and a 2.8 KB
// body) and writes it as the channel's client does (the URL read, then the
// request written to its connection's buffer).
func BenchmarkUpstreamRequest(b *testing.B) {
	g := newBenchGateway(b, benchRequest{}, "http://127.0.0.1:9/v1", "gpt-4o-mini")
	ch := g.table.Load().channels[0]
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("All work and no play. ", 125) + `"}]}`)
	x := &exchange{op: opGenerate, id: []byte("req_0123456789abcdef01234567")}
	var ok bool
	if x.uri, ok = ch.appendURI(nil, opGenerate.op, "gpt-4o-mini", false); !ok {
		b.Fatal("no URL")
	}
	w := bufio.NewWriterSize(io.Discard, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := fasthttp.AcquireRequest()
		g.prepare(req, x, ch, body)
		if string(req.URI().Path()) != "/v1/chat/completions" {
			b.Fatalf("path %q", req.URI().Path())
		}
		if err := req.Write(w); err != nil {
			b.Fatal(err)
		}
		fasthttp.ReleaseRequest(req)
	}
}
