package proxy

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/codec"
)

// Limit scopes, as rosetta_rate_limited_total names them.
const (
	scopeKey      = "key"
	scopeKeyModel = "key_model"
	scopeChannel  = "channel"
)

// admit applies the key's rate limits and its limits on the model,
// reserving an estimate of the tokens under each, and reports them in the
// client's style's header names (the key's own when it has both). It
// answers 429 and returns false when the request is over a limit; a
// refused request is counted under none.
func (g *Gateway) admit(ctx *fasthttp.RequestCtx, x *exchange, estimate int64) bool {
	k := x.key
	ml, onModel := k.modelLimits[x.model]
	if k.Limits == (ratelimit.Limits{}) && !onModel {
		return true
	}
	var model *ratelimit.State
	if onModel {
		model = g.limiter.State(ml.limitKey)
		if d := g.limiter.CheckAt(model, ml.limits, estimate, x.start); !d.Allowed {
			return g.refuse(ctx, x, ml.limits, d, scopeKeyModel)
		}
	}
	var rl codec.RateLimit
	if k.Limits != (ratelimit.Limits{}) {
		st := g.limiter.State(k.limitKey)
		d := g.limiter.AdmitAt(st, k.Limits, estimate, x.start)
		if !d.Allowed {
			return g.refuse(ctx, x, k.Limits, d, scopeKey)
		}
		x.limit, x.reserved = st, estimate
		rl = rateLimitOf(k.Limits, d)
	}
	if onModel {
		// Checked above; another request may have taken the room since,
		// in which case this one is let through: the overshoot is one.
		d := g.limiter.AdmitAt(model, ml.limits, estimate, x.start)
		x.modelLimit = model
		if k.Limits == (ratelimit.Limits{}) {
			rl = rateLimitOf(ml.limits, d)
		}
	}
	x.buf = x.style.SetRateLimit(canonicalWriter{&ctx.Response.Header}, x.buf[:0], rl)
	return true
}

// refuse answers the 429 of a request over the limits lim of scope.
func (g *Gateway) refuse(ctx *fasthttp.RequestCtx, x *exchange, lim ratelimit.Limits, d ratelimit.Decision, scope string) bool {
	g.metrics.limited[scopeIndex(scope)].Inc()
	kind, what := codec.KindRateLimitRequests, "requests"
	if d.ByTokens {
		kind, what = codec.KindRateLimitTokens, "tokens"
	}
	where := "this key"
	if scope == scopeKeyModel {
		where = "this key for the model '" + x.model + "'"
	}
	e := errorf(429, kind, "rate_limit_exceeded",
		"Rate limit reached for %s per minute on %s. Retry after %s.", what, where, secondsCeil(d.RetryAfter)+"s")
	e.RateLimit = rateLimitOf(lim, d)
	g.fail(ctx, x, e)
	return false
}

// readyChannel readies a candidate channel for an attempt: its own limits
// have room (else limitWait keeps the shortest wait of those refused) and
// its breaker lets a request through. false: pass it over, not failed. A
// request that is not metered (a token count: providers count those
// apart) is not counted under the channel's limits.
func (g *Gateway) readyChannel(x *exchange, ch *channel, limitWait *time.Duration) bool {
	if !x.op.metered {
		return ch.breaker.allowNow() == 0
	}
	if ok, wait := g.channelRoom(x, ch); !ok {
		*limitWait = shortestWait(*limitWait, wait)
		return false
	}
	if ch.breaker.allowNow() > 0 {
		return false // another request took the probe of a half-open circuit
	}
	if !g.takeChannel(x, ch) {
		ch.breaker.abandon()
		return false
	}
	return true
}

// channelRoom reports whether ch's own limits leave room for the request,
// without counting it, and when not how long until they may.
func (g *Gateway) channelRoom(x *exchange, ch *channel) (bool, time.Duration) {
	if ch.limit == nil {
		return true, 0
	}
	d := g.limiter.Check(ch.limit, ch.limits, x.reserve)
	if !d.Allowed {
		g.metrics.limited[scopeIndex(scopeChannel)].Inc()
	}
	return d.Allowed, d.RetryAfter
}

// takeChannel counts the request under ch's limits, reserving its
// estimate, which finish settles (or releaseChannel when another channel
// is tried). false: another request took the room since channelRoom.
func (g *Gateway) takeChannel(x *exchange, ch *channel) bool {
	if ch.limit == nil {
		return true
	}
	if !g.limiter.Admit(ch.limit, ch.limits, x.reserve).Allowed {
		return false
	}
	x.channelLimit = ch.limit
	return true
}

// releaseChannel settles the channel reservation of a failed attempt: the
// upstream saw a request, and charged no tokens for it.
func (g *Gateway) releaseChannel(x *exchange) {
	if x.channelLimit != nil {
		g.limiter.Settle(x.channelLimit, x.reserve, 0)
		x.channelLimit = nil
	}
}

// settleLimits settles the exchange's reservations with the tokens it
// used, at now. A stream the client abandoned before the upstream reported
// usage is charged the estimate: the upstream read the request all the
// same.
func (g *Gateway) settleLimits(x *exchange, now time.Time) {
	used := int64(x.usage.Total())
	if used == 0 && x.status == 499 && x.attempts > 0 {
		used = x.reserve
	}
	for _, st := range [...]*ratelimit.State{x.limit, x.modelLimit, x.channelLimit} {
		if st != nil {
			g.limiter.SettleAt(st, x.reserve, used, now)
		}
	}
}

// errChannelsLimited is the 429 of a request every candidate channel of
// refused by its own limits, with the shortest wait among them.
func errChannelsLimited(x *exchange, wait time.Duration) *codec.Error {
	e := errorf(429, codec.KindRateLimitRequests, "rate_limit_exceeded",
		"The upstream channels for '%s' are at their rate limits. Retry after %s.", x.model, secondsCeil(wait)+"s")
	e.RateLimit.RetryAfter = max(wait, time.Nanosecond)
	return e
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
