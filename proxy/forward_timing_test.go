package proxy

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// BenchmarkUpstreamRequest builds the upstream request of a non-streamed
// chat completion as attempt does (prepare: its URL, headers and a 2.8 KB
// body) and writes it as the channel's client does (the URL read, then the
// request written to its connection's buffer), with one forward state, as
// the requests to one channel nearly always find theirs.
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
	st := takeForwardState()
	defer st.release()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		g.prepare(st, x, ch, body)
		if string(st.req.URI().Path()) != "/v1/chat/completions" {
			b.Fatalf("path %q", st.req.URI().Path())
		}
		if err := st.req.Write(w); err != nil {
			b.Fatal(err)
		}
		st.resetRequest()
	}
}

// BenchmarkUpstreamBody is the body of a non-streamed chat completion's
// attempt on the pass-through path (2.8 KB): the client's bytes themselves
// when the channel's model name is the client's, else a copy with the name
// spliced in.
func BenchmarkUpstreamBody(b *testing.B) {
	g := newBenchGateway(b, benchRequest{}, "http://127.0.0.1:9/v1", "gpt-4o-mini")
	ch := g.table.Load().channels[0]
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("All work and no play. ", 125) + `"}]}`)
	var r openai.ChatRequest
	if e := r.Parse(body); e != nil {
		b.Fatal(e)
	}
	x := &exchange{op: opGenerate, style: ch.style, inbound: &r}
	ctx := &fasthttp.RequestCtx{}
	for _, model := range []string{"gpt-4o-mini", "gpt-4o-mini-2024-07-18"} {
		b.Run(model, func(b *testing.B) {
			var buf bodyBuf
			defer buf.release()
			b.ReportAllocs()
			for b.Loop() {
				up, e := g.upstreamBody(ctx, &buf, x, body, candidate{ch, model})
				if e != nil || len(up) < len(body) {
					b.Fatalf("%d bytes, %v", len(up), e)
				}
			}
		})
	}
}
