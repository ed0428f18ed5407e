package proxy

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkPassHeaders copies the headers OpenAI sends with a chat
// completion to a client's answer: to an OpenAI client (the same words,
// copied) and to an Anthropic client (the quota headers read and written in
// its names).
func BenchmarkPassHeaders(b *testing.B) {
	var up fasthttp.ResponseHeader
	for _, h := range [][2]string{
		{"Openai-Organization", "user-bench0000000000000000"},
		{"Openai-Processing-Ms", "412"},
		{"Openai-Project", "proj_bench000000000000000000"},
		{"Openai-Version", "2020-10-01"},
		{"X-Ratelimit-Limit-Requests", "30000"},
		{"X-Ratelimit-Limit-Tokens", "150000000"},
		{"X-Ratelimit-Remaining-Requests", "29999"},
		{"X-Ratelimit-Remaining-Tokens", "149999513"},
		{"X-Ratelimit-Reset-Requests", "2ms"},
		{"X-Ratelimit-Reset-Tokens", "0s"},
		{"X-Request-Id", "req_3f9a2c1e8b7d4a6f9e0c2b1a8d7f6e5c"},
		{"Strict-Transport-Security", "max-age=31536000; includeSubDomains; preload"},
		{"X-Content-Type-Options", "nosniff"},
		{"Cf-Cache-Status", "DYNAMIC"},
	} {
		up.Set(h[0], h[1])
	}
	ch := &channel{style: styleOpenAI}
	for _, client := range []*dialect{styleOpenAI, styleAnthropic} {
		b.Run(client.Name(), func(b *testing.B) {
			x := &exchange{style: client, key: &Key{}}
			var h fasthttp.ResponseHeader
			b.ReportAllocs()
			for b.Loop() {
				h.Reset()
				passHeaders(&h, x, ch, &up)
			}
			if len(h.Peek("X-Upstream-Request-Id")) == 0 {
				b.Fatal("the upstream's request id was not passed")
			}
		})
	}
}
