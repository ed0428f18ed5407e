package proxy

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/config"
)

// TestRecoverPanic: a handler found by its path (the POST routes without
// parameters) that panics is answered as the router's PanicHandler answers
// the others: a 500 in the client's style naming the request id.
func TestRecoverPanic(t *testing.T) {
	cfg, err := config.Parse([]byte("channels:\n  - {name: demo, type: demo, models: [demo]}\n"), "t.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), AccessLog: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(path)
		func() {
			defer g.recoverPanic(&ctx)
			panic("boom")
		}()
		body := string(ctx.Response.Body())
		if ctx.Response.StatusCode() != 500 || !strings.Contains(body, "Internal error (request id req_") {
			t.Errorf("%s: %d %s", path, ctx.Response.StatusCode(), body)
		}
		if path == "/v1/messages" && !strings.Contains(body, `"type":"error"`) {
			t.Errorf("%s: not in Anthropic's style: %s", path, body)
		}
	}
}
