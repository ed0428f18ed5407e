package proxy

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/internal/asynclog"
	"github.com/rosetta-gateway/rosetta/store"
)

// BenchmarkGatewayInMemory is the gateway's own CPU per request, network
// excluded: client, gateway and mock upstream talk over in-memory pipes, so
// what is left is parsing, routing, the upstream client, relaying, logging
// and metrics. The load harness (bench/) measures the real thing.
func BenchmarkGatewayInMemory(b *testing.B) {
	const (
		whole  = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}]}`
		stream = `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello."}]}`
	)
	for _, mode := range []struct {
		name, body string
		usage      bool // rows to a store.UsageWriter, as the binary runs
	}{
		{"nonstream", whole, false},
		{"stream", stream, false},
		{"nonstream-usage", whole, true},
		{"stream-usage", stream, true},
	} {
		b.Run(mode.name, func(b *testing.B) {
			response, err := os.ReadFile("testdata/chat_response.json")
			if err != nil {
				b.Fatal(err)
			}
			events := streamFixture(b, 20)
			benchGateway(b, benchRequest{path: "/v1/chat/completions", body: mode.body, usage: mode.usage}, func(ctx *fasthttp.RequestCtx) {
				if mode.body == stream {
					ctx.SetContentType("text/event-stream")
					ctx.SetBody(events)
					return
				}
				ctx.SetContentType("application/json")
				ctx.SetBody(response)
			})
		})
	}
}

// benchRequest is what benchGateway sends, and how the gateway runs.
type benchRequest struct {
	path, body string
	// usage: usage rows go to a store.UsageWriter, as the binary runs;
	// store: the gateway has a store (that keeps nothing).
	usage, store bool
}

// benchGateway measures requests through a gateway whose one channel,
// mock, is upstream over in-memory pipes, logging as the binary does.
func benchGateway(b *testing.B, r benchRequest, upstream fasthttp.RequestHandler) {
	up := fasthttputil.NewInmemoryListener()
	defer up.Close()
	go (&fasthttp.Server{Handler: upstream}).Serve(up)

	g := newBenchGateway(b, r, "http://mock/v1", "gpt-4o-mini")
	mock := g.table.Load().channels[0]
	mock.client.Dial = func(string) (net.Conn, error) {
		c, err := up.Dial()
		if err != nil {
			return nil, err
		}
		t := mock.cfg.Timeouts
		return &timedConn{Conn: c, firstByte: t.FirstByte, idle: t.Idle}, nil
	}
	front := fasthttputil.NewInmemoryListener()
	defer front.Close()
	go g.Serve(front)
	client := &fasthttp.HostClient{Addr: "gateway", Dial: func(string) (net.Conn, error) { return front.Dial() }}

	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://gateway" + r.path)
		req.Header.SetMethod("POST")
		req.Header.Set("Authorization", "Bearer sk-bench-0123456789abcdef")
		req.SetBodyString(r.body)
		for pb.Next() {
			if err := client.Do(req, resp); err != nil || resp.StatusCode() != 200 {
				b.Errorf("%v %d %s", err, resp.StatusCode(), resp.Body())
				return
			}
		}
	})
}

// newBenchGateway is a gateway of one channel, mock, at baseURL serving
// model, with the key sk-bench-0123456789abcdef, logging as the binary
// does (to io.Discard), with usage rows and a store as r says; it is shut
// when the benchmark ends, and serves when asked.
func newBenchGateway(b testing.TB, r benchRequest, baseURL, model string) *Gateway {
	cfg, err := config.Parse([]byte(`
channels:
  - {name: mock, type: openai, base_url: "`+baseURL+`", api_keys: [sk-up-0123456789], models: [`+model+`]}
keys:
  - {name: bench, key: sk-bench-0123456789abcdef}
`), "bench", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	sink := asynclog.New(io.Discard, 100e6, 4<<20)
	b.Cleanup(func() { sink.Close() })
	opts := Options{Log: slog.New(slog.NewJSONHandler(sink, nil)), AccessLog: sink} // as the binary runs
	if r.usage {
		w := store.NewUsageWriter(discardStore{}, store.UsageWriterOptions{})
		b.Cleanup(func() { w.Close(context.Background()) })
		opts.Usage = w
	}
	if r.store {
		opts.Store = discardStore{}
	}
	g, err := New(cfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Shutdown(context.Background()) }) //nolint:errcheck
	return g
}

// discardStore takes usage rows and responses and forgets them.
type discardStore struct{ store.Store }

func (discardStore) AddUsage(context.Context, []store.Usage) error        { return nil }
func (discardStore) PutResponses(context.Context, []store.Response) error { return nil }
func (discardStore) Channels(context.Context) ([]store.Channel, error)    { return nil, nil }
func (discardStore) KeyChanges(context.Context, int64, int) ([][32]byte, int64, error) {
	return nil, 0, nil
}

// BenchmarkPostRouteLookup is the handler's lookup of a POST route by its
// path: the chat route (most requests), a route sharing its path's length
// with another, a miss.
func BenchmarkPostRouteLookup(b *testing.B) {
	tab := newPostTable((&Gateway{}).postRoutes())
	for _, c := range []struct{ name, path string }{
		{"chat", "/v1/chat/completions"},
		{"length-shared", "/v1/audio/speech"},
		{"miss", "/v1beta/models/m:generateContent"},
	} {
		p := []byte(c.path)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if tab.find(p).upload {
					b.Fatal("no upload route looked up")
				}
			}
		})
	}
}
