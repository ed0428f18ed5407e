package proxy

import (
	"fmt"
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// BenchmarkEmbeddings is the embeddings pass-through against the upstream
// called directly, on loopback TCP in one process: the same client, the
// same mock upstream (OpenAI's answer to one text, floats or base64), 16
// requests at a time; "gateway" adds the gateway as the binary runs it
// (async access log, usage rows to a writer that discards them). Divide
// gateway's ns/op by direct's for what the gateway adds to a request's
// wall time on this machine (the three share its cores).
func BenchmarkEmbeddings(b *testing.B) {
	for _, format := range []string{"float", "base64"} {
		answer := testutil.EmbeddingAnswer("text-embedding-3-small", format == "base64")
		body := fmt.Sprintf(`{"model":"text-embedding-3-small","input":"The food was delicious and the waiter was kind.",`+
			`"encoding_format":%q}`, format)
		upstream := listen(b, &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) != "/v1/embeddings" {
				ctx.Error("unknown path", 404)
				return
			}
			ctx.SetContentType("application/json")
			ctx.SetBody(answer)
		}})
		gateway := listen(b, newBenchGateway(b, benchRequest{usage: true}, "http://"+upstream+"/v1", "text-embedding-3-small").server)
		for _, to := range []struct{ name, addr, key string }{
			{"direct", upstream, "sk-up-0123456789"},
			{"gateway", gateway, "sk-bench-0123456789abcdef"},
		} {
			b.Run(format+"/"+to.name, func(b *testing.B) {
				client := &fasthttp.HostClient{Addr: to.addr, MaxConns: 64}
				b.SetBytes(int64(len(answer)))
				b.ReportAllocs()
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
					defer fasthttp.ReleaseRequest(req)
					defer fasthttp.ReleaseResponse(resp)
					req.SetRequestURI("http://" + to.addr + "/v1/embeddings")
					req.Header.SetMethod("POST")
					req.Header.SetContentType("application/json")
					req.Header.Set("Authorization", "Bearer "+to.key)
					req.SetBodyString(body)
					for pb.Next() {
						if err := client.Do(req, resp); err != nil || resp.StatusCode() != 200 || len(resp.Body()) != len(answer) {
							b.Errorf("%v %d %.200s", err, resp.StatusCode(), resp.Body())
							return
						}
					}
				})
			})
		}
	}
}

// listen serves s on a loopback port until the benchmark ends, and returns
// its address.
func listen(b *testing.B, s *fasthttp.Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	b.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}
