package proxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// responsesStream is a Responses API stream of n text deltas: 4 lifecycle
// and content events before them, 5 after.
func responsesStream(n int) []byte {
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = " word"
	}
	return []byte(testutil.ResponseStream("resp_bench1", "gpt-4o-mini", deltas...))
}

// BenchmarkResponsesRelayEvent is the pass-through cost per event of a
// Responses stream (openai.Responses: the check, the lifecycle events'
// id, status, usage and model), as BenchmarkRelayEvent is for chat.
func BenchmarkResponsesRelayEvent(b *testing.B) {
	const n = 1000
	benchRelayEvents(b, responsesStream(n), n+9, openai.Responses)
}

// BenchmarkResponsesInMemory is the gateway's own CPU per Responses
// request relayed to a native channel, as BenchmarkGatewayInMemory is for
// chat: whole and streamed (20 deltas), with usage rows and the response
// remembered (to a store that keeps nothing).
func BenchmarkResponsesInMemory(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name, body := "nonstream", `{"model":"gpt-4o-mini","input":"Say hello."}`
		if stream {
			name, body = "stream", `{"model":"gpt-4o-mini","stream":true,"input":"Say hello."}`
		}
		b.Run(name, func(b *testing.B) {
			events := responsesStream(20)
			var n int64
			benchGateway(b, benchRequest{path: "/v1/responses", body: body, usage: true, store: true},
				func(ctx *fasthttp.RequestCtx) {
					n++ // one upstream connection per gateway connection: ids need not be unique
					id := "resp_" + string(fasthttp.AppendUint(nil, int(n%64)))
					if stream {
						ctx.SetContentType("text/event-stream")
						ctx.SetBody(bytes.ReplaceAll(events, []byte("resp_bench1"), []byte(id)))
						return
					}
					ctx.SetContentType("application/json")
					ctx.SetBodyString(strings.ReplaceAll(testutil.ResponseObject("resp_bench1", "gpt-4o-mini", "completed", "Hello!"),
						"resp_bench1", id))
				})
		})
	}
}

// Two Responses requests to translate: one that the chat API carries
// whole, one with members it has no place for.
const (
	translatedPlain    = `{"model":"gpt-4o-mini","instructions":"Be brief.","input":"Weather in Tokyo?","temperature":0.2}`
	translatedDropping = `{"model":"gpt-4o-mini","instructions":"Be brief.","input":"Weather in Tokyo?","temperature":0.2,` +
		`"text":{"verbosity":"low"},"include":["message.output_text.logprobs"],"service_tier":"flex"}`
)

// translatedExchange is an exchange of a Responses request on its way to
// a chat channel (responses: translate), and that candidate.
func translatedExchange() (*exchange, candidate, *fasthttp.RequestCtx) {
	x := &exchange{style: styleResponses, op: opResponsesTranslated, ways: waysTranslated, buf: make([]byte, 0, 1024)}
	return x, candidate{&channel{style: styleOpenAI}, "gpt-4o-mini"}, &fasthttp.RequestCtx{}
}

// translateResponses decodes body and appends the upstream request, as
// the translated path does at each attempt, into x.buf.
func translateResponses(tb testing.TB, x *exchange, c candidate, ctx *fasthttp.RequestCtx, body []byte) {
	x.canonReady = false
	if e := x.decodeResponses(body); e != nil {
		tb.Fatal(e)
	}
	var e *codec.Error
	if _, e = (*Gateway)(nil).upstreamBody(ctx, &bodyBuf{&x.buf}, x, body, c); e != nil {
		tb.Fatal(e)
	}
}

// BenchmarkResponsesTranslateRequest is the cost of a Responses request
// on the translated path: decoded, its dropped members named
// (X-Rosetta-Dropped), encoded for a chat channel.
func BenchmarkResponsesTranslateRequest(b *testing.B) {
	for _, c := range []struct{ name, body string }{{"nothing-dropped", translatedPlain}, {"dropped", translatedDropping}} {
		b.Run(c.name, func(b *testing.B) {
			x, cand, ctx := translatedExchange()
			body := []byte(c.body)
			b.ReportAllocs()
			for b.Loop() {
				translateResponses(b, x, cand, ctx, body)
			}
		})
	}
}
