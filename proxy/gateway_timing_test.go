package proxy

import (
	"io"
	"log/slog"
	"net"
	"os"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/internal/asynclog"
)

// BenchmarkGatewayInMemory is the gateway's own CPU per request, network
// excluded: client, gateway and mock upstream talk over in-memory pipes, so
// what is left is parsing, routing, the upstream client, relaying, logging
// and metrics. The load harness (bench/) measures the real thing.
func BenchmarkGatewayInMemory(b *testing.B) {
	for _, mode := range []struct {
		name, body string
		reply      func(*fasthttp.RequestCtx)
	}{
		{"nonstream", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}]}`, nil},
		{"stream", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello."}]}`, nil},
	} {
		b.Run(mode.name, func(b *testing.B) {
			whole, err := os.ReadFile("testdata/chat_response.json")
			if err != nil {
				b.Fatal(err)
			}
			stream := streamFixture(b, 20)
			up := fasthttputil.NewInmemoryListener()
			defer up.Close()
			go (&fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
				if mode.name == "stream" {
					ctx.SetContentType("text/event-stream")
					ctx.SetBody(stream)
					return
				}
				ctx.SetContentType("application/json")
				ctx.SetBody(whole)
			}}).Serve(up)

			cfg, err := config.Parse([]byte(`
channels:
  - {name: mock, type: openai, base_url: "http://mock/v1", api_keys: [sk-up-0123456789], models: [gpt-4o-mini]}
keys:
  - {name: bench, key: sk-bench-0123456789abcdef}
`), "bench", func(string) string { return "" })
			if err != nil {
				b.Fatal(err)
			}
			sink := asynclog.New(io.Discard, 100e6, 4<<20)
			defer sink.Close()
			g, err := New(cfg, Options{Log: slog.New(slog.NewJSONHandler(sink, nil))})
			if err != nil {
				b.Fatal(err)
			}
			g.channels[0].client.Dial = func(string) (net.Conn, error) {
				c, err := up.Dial()
				if err != nil {
					return nil, err
				}
				t := g.channels[0].cfg.Timeouts
				return &timedConn{Conn: c, firstByte: t.FirstByte, idle: t.Idle}, nil
			}
			front := fasthttputil.NewInmemoryListener()
			defer front.Close()
			go g.Serve(front)
			client := &fasthttp.HostClient{Addr: "gateway", Dial: func(string) (net.Conn, error) { return front.Dial() }}

			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				req.SetRequestURI("http://gateway/v1/chat/completions")
				req.Header.SetMethod("POST")
				req.Header.Set("Authorization", "Bearer sk-bench-0123456789abcdef")
				req.SetBodyString(mode.body)
				for pb.Next() {
					if err := client.Do(req, resp); err != nil || resp.StatusCode() != 200 {
						b.Errorf("%v %d %s", err, resp.StatusCode(), resp.Body())
						return
					}
				}
			})
		})
	}
}
