package proxy

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkPassHeaders copies the headers OpenAI sends with a chat
// completion to a client's answer: to an OpenAI client (the same words,
// their values moved) and to an Anthropic client (the quota headers read
// and written in its names). The answer's header is copied from sent before
// each pass (its storage kept, as a header read again keeps it), since a
// pass to an OpenAI client moves its values out.
func BenchmarkPassHeaders(b *testing.B) {
	var sent, up fasthttp.ResponseHeader
	for _, h := range OpenAIHeaders {
		sent.Set(h[0], h[1])
	}
	ch := &channel{style: styleOpenAI}
	for _, client := range []*dialect{styleOpenAI, styleAnthropic} {
		b.Run(client.Name(), func(b *testing.B) {
			x := &exchange{style: client, key: &Key{}}
			var h fasthttp.ResponseHeader
			b.ReportAllocs()
			for b.Loop() {
				sent.CopyTo(&up)
				h.Reset()
				passHeaders(&h, x, ch, &up)
			}
			if len(h.Peek("X-Upstream-Request-Id")) == 0 {
				b.Fatal("the upstream's request id was not passed")
			}
		})
	}
}

// BenchmarkUpstreamAnswerHeaders reads the header of an OpenAI chat
// completion's answer (the bench mock's: OpenAI's names and values) as the
// channel's client does, names kept as sent, and passes it on to an OpenAI
// client; "normalized" reads it as fasthttp does by default, for comparison.
func BenchmarkUpstreamAnswerHeaders(b *testing.B) {
	raw := []byte("HTTP/1.1 200 OK\r\nDate: Thu, 26 Nov 2026 17:00:00 GMT\r\nContent-Type: application/json\r\n" +
		"Content-Length: 612\r\nConnection: keep-alive\r\n" +
		"access-control-expose-headers: X-Request-ID\r\nopenai-organization: user-bench0000000000000000\r\n" +
		"openai-processing-ms: 412\r\nopenai-project: proj_bench000000000000000000\r\nopenai-version: 2020-10-01\r\n" +
		"x-envoy-upstream-service-time: 415\r\nx-ratelimit-limit-requests: 30000\r\nx-ratelimit-limit-tokens: 150000000\r\n" +
		"x-ratelimit-remaining-requests: 29999\r\nx-ratelimit-remaining-tokens: 149999513\r\n" +
		"x-ratelimit-reset-requests: 2ms\r\nx-ratelimit-reset-tokens: 0s\r\nx-request-id: req_3f9a2c1e8b7d4a6f9e0c2b1a8d7f6e5c\r\n" +
		"strict-transport-security: max-age=31536000; includeSubDomains; preload\r\nx-content-type-options: nosniff\r\n" +
		"cf-cache-status: DYNAMIC\r\nServer: cloudflare\r\nCF-RAY: 8f3a2b1c4d5e6f70-FRA\r\nalt-svc: h3=\":443\"; ma=86400\r\n\r\n")
	ch := &channel{style: styleOpenAI}
	x := &exchange{style: styleOpenAI, key: &Key{}}
	for _, normalized := range []bool{false, true} {
		name := "as_sent"
		if normalized {
			name = "normalized"
		}
		b.Run(name, func(b *testing.B) {
			var up, h fasthttp.ResponseHeader
			r := bytes.NewReader(raw)
			br := bufio.NewReaderSize(r, 4096)
			b.ReportAllocs()
			for b.Loop() {
				up.Reset()
				if !normalized {
					up.DisableNormalizing() // as the channel's client reads
				}
				r.Reset(raw)
				br.Reset(r)
				if err := up.Read(br); err != nil {
					b.Fatal(err)
				}
				h.Reset()
				passHeaders(&h, x, ch, &up)
			}
			if string(h.Peek("X-Upstream-Request-Id")) != "req_3f9a2c1e8b7d4a6f9e0c2b1a8d7f6e5c" || len(h.Peek("X-Ratelimit-Reset-Tokens")) == 0 {
				b.Fatalf("headers not passed: %s", h.Header())
			}
		})
	}
}
