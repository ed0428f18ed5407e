package proxy

import (
	"os"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkGatewayBodySize measures a whole chat completion through the
// gateway with request bodies of a few sizes: the ones that come with
// their headers (fasthttp reads up to 8 KiB with them) and the larger ones
// the gateway reads from the body stream itself (readBody).
func BenchmarkGatewayBodySize(b *testing.B) {
	response, err := os.ReadFile("testdata/chat_response.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"32KiB", 32 << 10}, {"256KiB", 256 << 10}} {
		b.Run(size.name, func(b *testing.B) {
			body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("x", size.n) + `"}]}`
			benchGateway(b, benchRequest{path: "/v1/chat/completions", body: body}, func(ctx *fasthttp.RequestCtx) {
				ctx.SetContentType("application/json")
				ctx.SetBody(response)
			})
		})
	}
}

// BenchmarkHeadPath measures finding the path of a POST's head, as
// headerReceived does for a POST whose Content-Length is over the smaller
// of the two body limits: an origin-form target with a query.
func BenchmarkHeadPath(b *testing.B) {
	var h fasthttp.RequestHeader
	h.SetMethod("POST")
	h.SetHost("gw")
	h.SetRequestURI("/v1/audio/transcriptions?api-version=1")
	b.ReportAllocs()
	for b.Loop() {
		if len(headPath(&h)) == 0 {
			b.Fatal("no path")
		}
	}
}
