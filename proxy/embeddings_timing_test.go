package proxy

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/internal/asynclog"
	"github.com/rosetta-gateway/rosetta/store"
)

// embeddingAnswer is OpenAI's answer to an embeddings request of one text
// from text-embedding-3-small: 1536 dimensions, as floats (about 20 KB of
// JSON) or base64 (8 KB).
func embeddingAnswer(base64Encoded bool) []byte {
	vec := make([]float32, 1536)
	for i := range vec {
		vec[i] = float32(math.Sin(float64(i))) / 40
	}
	b := []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":`)
	if base64Encoded {
		raw := make([]byte, 0, 4*len(vec))
		for _, f := range vec {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
		b = append(append(append(b, '"'), base64.StdEncoding.EncodeToString(raw)...), '"')
	} else {
		b = append(b, '[')
		for i, f := range vec {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(f), 'f', -1, 32)
		}
		b = append(b, ']')
	}
	return append(b, `}],"model":"text-embedding-3-small","usage":{"prompt_tokens":9,"total_tokens":9}}`...)
}

// BenchmarkEmbeddings is the embeddings pass-through against the upstream
// called directly, on loopback TCP in one process: the same client, the
// same mock upstream (OpenAI's answer to one text, floats or base64), 16
// requests at a time; "gateway" adds the gateway as the binary runs it
// (async access log, usage rows to a writer that discards them). Divide
// gateway's ns/op by direct's for what the gateway adds to a request's
// wall time on this machine (the three share its cores).
func BenchmarkEmbeddings(b *testing.B) {
	for _, format := range []string{"float", "base64"} {
		answer := embeddingAnswer(format == "base64")
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
		gateway := listen(b, benchEmbeddingsGateway(b, upstream))
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

// benchEmbeddingsGateway is a gateway in front of the upstream at addr, as
// the binary runs it but for the store.
func benchEmbeddingsGateway(b *testing.B, addr string) *fasthttp.Server {
	cfg, err := config.Parse([]byte(`
channels:
  - {name: up, type: openai, base_url: "http://`+addr+`/v1", api_keys: [sk-up-0123456789], models: [text-embedding-3-small]}
keys:
  - {name: bench, key: sk-bench-0123456789abcdef}
`), "bench", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	sink := asynclog.New(io.Discard, 100e6, 4<<20)
	b.Cleanup(func() { sink.Close() })
	w := store.NewUsageWriter(discardStore{}, store.UsageWriterOptions{})
	b.Cleanup(func() { w.Close(context.Background()) })
	g, err := New(cfg, Options{Log: slog.New(slog.NewJSONHandler(sink, nil)), AccessLog: sink, Usage: w})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Shutdown(context.Background()) })
	return g.server
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
