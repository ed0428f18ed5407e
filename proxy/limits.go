package proxy

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/proxy/ratelimit"
)

// admit applies the key's rate limits, reserving an estimate of the tokens.
// It answers 429 and returns false when the request is over a limit.
func (g *Gateway) admit(ctx *fasthttp.RequestCtx, x *exchange, estimate int64) bool {
	lim := x.key.Limits
	if lim == (ratelimit.Limits{}) {
		return true
	}
	st := g.limiter.State(x.key.limitKey)
	d := g.limiter.Admit(st, lim, estimate)
	setRateHeaders(ctx, lim, d)
	if d.Allowed {
		x.limit, x.reserved = st, estimate
		return true
	}
	kind, what := codec.KindRateLimitRequests, "requests"
	if d.ByTokens {
		kind, what = codec.KindRateLimitTokens, "tokens"
	}
	g.fail(ctx, x, errorf(429, kind, "rate_limit_exceeded",
		"Rate limit reached for %s per minute on this key. Retry after %s.", what, secondsCeil(d.RetryAfter)+"s"))
	return false
}

// setRateHeaders reports a key's limits in OpenAI's header names.
func setRateHeaders(ctx *fasthttp.RequestCtx, lim ratelimit.Limits, d ratelimit.Decision) {
	h := &ctx.Response.Header
	var b [24]byte
	if lim.RPM > 0 {
		h.SetBytesV("X-Ratelimit-Limit-Requests", strconv.AppendInt(b[:0], lim.RPM, 10))
		h.SetBytesV("X-Ratelimit-Remaining-Requests", strconv.AppendInt(b[:0], d.RemainingRequests, 10))
		h.SetBytesV("X-Ratelimit-Reset-Requests", appendSeconds(b[:0], d.Reset))
	}
	if lim.TPM > 0 {
		h.SetBytesV("X-Ratelimit-Limit-Tokens", strconv.AppendInt(b[:0], lim.TPM, 10))
		h.SetBytesV("X-Ratelimit-Remaining-Tokens", strconv.AppendInt(b[:0], d.RemainingTokens, 10))
		h.SetBytesV("X-Ratelimit-Reset-Tokens", appendSeconds(b[:0], d.Reset))
	}
	if !d.Allowed {
		h.SetBytesV("Retry-After", strconv.AppendInt(b[:0], int64((d.RetryAfter+time.Second-1)/time.Second), 10))
	}
}

// appendSeconds writes d as OpenAI's reset headers do: "12.5s".
func appendSeconds(dst []byte, d time.Duration) []byte {
	return append(strconv.AppendFloat(dst, d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64), 's')
}
