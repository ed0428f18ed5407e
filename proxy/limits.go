package proxy

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/proxy/ratelimit"
)

// admit applies the key's rate limits, reserving an estimate of the tokens,
// and reports them in the client's style's header names. It answers 429 and
// returns false when the request is over a limit.
func (g *Gateway) admit(ctx *fasthttp.RequestCtx, x *exchange, estimate int64) bool {
	lim := x.key.Limits
	if lim == (ratelimit.Limits{}) {
		return true
	}
	st := g.limiter.State(x.key.limitKey)
	d := g.limiter.Admit(st, lim, estimate)
	rl := rateLimitOf(lim, d)
	if d.Allowed {
		x.buf = x.style.SetRateLimit(canonicalWriter{&ctx.Response.Header}, x.buf[:0], rl)
		x.limit, x.reserved = st, estimate
		return true
	}
	kind, what := codec.KindRateLimitRequests, "requests"
	if d.ByTokens {
		kind, what = codec.KindRateLimitTokens, "tokens"
	}
	e := errorf(429, kind, "rate_limit_exceeded",
		"Rate limit reached for %s per minute on this key. Retry after %s.", what, secondsCeil(d.RetryAfter)+"s")
	e.RateLimit = rl
	g.fail(ctx, x, e)
	return false
}

// rateLimitOf is a key's limits and the limiter's decision, as a client is
// told them.
func rateLimitOf(lim ratelimit.Limits, d ratelimit.Decision) codec.RateLimit {
	var rl codec.RateLimit
	if lim.RPM > 0 {
		rl.Requests = codec.Quota{Limit: lim.RPM, Remaining: d.RemainingRequests, Reset: d.Reset}
	}
	if lim.TPM > 0 {
		rl.Tokens = codec.Quota{Limit: lim.TPM, Remaining: d.RemainingTokens, Reset: d.Reset}
	}
	if !d.Allowed {
		rl.RetryAfter = max(d.RetryAfter, time.Nanosecond) // written as at least 1 s
	}
	return rl
}
