package proxy

import (
	"bytes"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/proxy/ratelimit"
)

var (
	strAuthorization = []byte("Authorization")
	strJSON          = []byte("application/json")
	strEventStream   = []byte("text/event-stream")
)

// chatCompletions serves POST /v1/chat/completions on the pass-through path:
// the body is checked and forwarded with only the model name (and the usage
// option of streams) spliced in; the response is relayed as it comes.
func (g *Gateway) chatCompletions(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "chat.completions")
	key := g.authenticate(ctx, x)
	if key == nil {
		return // x is already finished
	}
	x.key = key
	body := ctx.PostBody()
	if e := x.req.Parse(body); e != nil {
		g.fail(ctx, x, e)
		return
	}
	x.stream, x.includeUsage = x.req.Stream, x.req.IncludeUsage
	g.generate(ctx, x, body, x.req.Model)
}

// errModelNotFound is the 503 for a model no channel serves.
func errModelNotFound[T string | []byte](model T) *codec.Error {
	return errorf(503, codec.KindNotFound, "model_not_found",
		"The model '%s' does not exist or is not served by this gateway.", model)
}

// generate routes a generation request, whatever its style, once the
// style's handler has authenticated and read it: model allow-list, route,
// rate limits, then the candidates in order.
func (g *Gateway) generate(ctx *fasthttp.RequestCtx, x *exchange, body, model []byte) {
	if !x.key.Allows(model) {
		g.fail(ctx, x, errorf(403, codec.KindPermission, "model_not_allowed",
			"This key may not use the model '%s'.", model))
		return
	}
	rt := g.table.Load().routes[string(model)]
	if rt == nil {
		g.fail(ctx, x, errModelNotFound(model))
		return
	}
	x.model, x.route, x.bodyLen = rt.public, rt, len(body)
	x.tagged = x.style.dialect().tagged(body)
	if !g.admit(ctx, x, int64(len(body)/4)) {
		return
	}
	cands, reopen := rt.order(x.cands[:0], time.Now())
	if len(cands) == 0 {
		ctx.Response.Header.Set("Retry-After", secondsCeil(reopen))
		g.fail(ctx, x, errorf(503, codec.KindUnavailable, "no_channel_available",
			"No upstream channel for '%s' is available now; retry later.", rt.public))
		return
	}
	g.forward(ctx, x, body, cands)
}

// authenticate returns the caller's key, or answers 401 (500 when the key
// store fails), finishes x and returns nil. A request that ServeAs runs
// carries its key already.
func (g *Gateway) authenticate(ctx *fasthttp.RequestCtx, x *exchange) *Key {
	if k, ok := ctx.UserValue(presetKey{}).(*Key); ok {
		return g.checkExpiry(ctx, x, k)
	}
	secret := secret(ctx, x.style)
	k, err := g.keys.authenticate(secret)
	switch {
	case err != nil:
		g.log.Error("cannot look up key", "id", string(x.id), "err", err)
		g.fail(ctx, x, errorf(500, codec.KindServer, "", "Internal error (request id %s).", x.id))
	case k == nil && len(secret) == 0:
		g.fail(ctx, x, &codec.Error{Status: 401, Kind: codec.KindAuthentication, Code: "missing_api_key",
			Message: "You didn't provide an API key. " + keyHint[x.style]})
	case k == nil:
		g.fail(ctx, x, &codec.Error{Status: 401, Kind: codec.KindAuthentication, Code: "invalid_api_key",
			Message: "Incorrect API key provided."})
	default:
		return g.checkExpiry(ctx, x, k)
	}
	return nil
}

// checkExpiry returns k, or answers 401 and returns nil when it has expired.
func (g *Gateway) checkExpiry(ctx *fasthttp.RequestCtx, x *exchange, k *Key) *Key {
	if k.expired() {
		g.fail(ctx, x, &codec.Error{Status: 401, Kind: codec.KindAuthentication, Code: "expired_api_key",
			Message: "This API key has expired."})
		return nil
	}
	return k
}

// keyHint tells a client without a key how its style sends one.
var keyHint = [...]string{
	styleOpenAI:    "Send it as 'Authorization: Bearer <key>'.",
	styleAnthropic: "Send it as 'x-api-key: <key>'.",
	styleGemini:    "Send it as '?key=<key>' or 'x-goog-api-key: <key>'.",
}

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

// forward tries the candidates in order until one answers. Failover happens
// only here, before anything was sent to the client.
func (g *Gateway) forward(ctx *fasthttp.RequestCtx, x *exchange, body []byte, cands []candidate) {
	var last *codec.Error
	buf := bodyBufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxPooledBody {
			bodyBufs.Put(buf)
		}
	}()
	for _, c := range cands {
		var e *codec.Error
		if *buf, e = g.upstreamBody(ctx, (*buf)[:0], x, body, c); e != nil {
			last = e // this channel's style cannot carry the request; another may
			continue
		}
		if c.ch.breaker.allow(time.Now()) > 0 {
			continue // another request took the probe of a half-open circuit
		}
		x.attempts++
		x.channel = c.ch.name
		e, retry := g.attempt(ctx, x, *buf, c)
		if e == nil {
			return
		}
		last = e
		if !retry {
			break
		}
	}
	if last == nil {
		last = errorf(503, codec.KindUnavailable, "no_channel_available",
			"No upstream channel for '%s' is available now; retry later.", x.model)
	}
	g.fail(ctx, x, last)
}

// attempt sends the request to one channel. It returns nil when a response
// went (or is streaming) to the client, else the error and whether another
// channel may be tried.
func (g *Gateway) attempt(ctx *fasthttp.RequestCtx, x *exchange, body []byte, c candidate) (*codec.Error, bool) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	g.prepare(req, x, c.ch, c.model, body)
	resp.StreamBody = x.stream
	err := c.ch.client.DoDeadline(req, resp, x.start.Add(c.ch.cfg.Timeouts.Total))
	fasthttp.ReleaseRequest(req)

	now := time.Now()
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		c.ch.breaker.failure(now)
		c.ch.answered(transportOutcome(err), now)
		g.log.Warn("upstream request failed", "id", string(x.id), "channel", c.ch.name, "err", err)
		return transportError(err), true
	}
	status := resp.StatusCode()
	c.ch.answered(outcomeOf(status), now)
	if status == 429 || status >= 500 || status == 401 || status == 403 {
		e := upstreamError(c.ch, x.style, status, resp.Body())
		fasthttp.ReleaseResponse(resp)
		c.ch.breaker.failure(now)
		g.log.Warn("upstream answered with an error", "id", string(x.id), "channel", c.ch.name,
			"status", status, "err", e.Message)
		return e, true
	}
	if status >= 400 {
		// The client's own mistake: relay it, the channel is healthy.
		e := upstreamError(c.ch, x.style, status, resp.Body())
		fasthttp.ReleaseResponse(resp)
		c.ch.breaker.success()
		return e, false
	}
	if x.stream && bytes.HasPrefix(resp.Header.ContentType(), strEventStream) {
		return g.startStream(ctx, x, c, resp)
	}
	if e := g.respond(ctx, x, c, resp); e != nil {
		fasthttp.ReleaseResponse(resp)
		c.ch.breaker.failure(now)
		c.ch.broke(outcomeBroken, now)
		return e, true
	}
	c.ch.breaker.success()
	fasthttp.ReleaseResponse(resp)
	g.finish(x)
	return nil, false
}

// bodyBufs holds upstream request bodies. A buffer grown past maxPooledBody
// by a rare huge request is left to the GC rather than kept for every later one.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledBody = 1 << 20

// prepare builds the upstream request. Only what the upstream needs is sent:
// never the client's credentials or other headers.
func (g *Gateway) prepare(req *fasthttp.Request, x *exchange, ch *channel, model string, body []byte) {
	req.Header.SetMethod(fasthttp.MethodPost)
	ch.setRequest(req, model, x.stream)
	req.Header.SetContentTypeBytes(strJSON)
	if x.stream {
		req.Header.SetBytesV("Accept", strEventStream)
	} else {
		req.Header.SetBytesV("Accept", strJSON)
	}
	req.Header.SetBytesKV(strRequestID, x.id)
	req.Header.SetUserAgent("rosetta")
	req.SetBodyRaw(body)
}

// respond answers with a whole (non-streamed) upstream response: relayed
// with the public model name put back when the styles match, else
// translated. It fails only when the upstream's answer cannot be read.
func (g *Gateway) respond(ctx *fasthttp.RequestCtx, x *exchange, c candidate, resp *fasthttp.Response) *codec.Error {
	b := resp.Body()
	x.status, x.ttfb = resp.StatusCode(), time.Since(x.start)
	if !passThrough(x, c.ch) {
		if err := c.ch.style.dialect().decodeResponse(b, &x.resp); err != nil {
			g.log.Warn("cannot read the upstream's response", "id", string(x.id), "channel", c.ch.name, "err", err)
			return errorf(502, codec.KindUpstream, "upstream_error", "The upstream provider's response could not be read.")
		}
		x.usage = x.resp.Usage
		ctx.SetStatusCode(x.status)
		ctx.SetContentType("application/json")
		x.buf = x.style.dialect().appendResponse(x.buf[:0], &x.resp, x.streamInfo(c.ch.style))
		ctx.SetBody(x.buf)
		return nil
	}
	ctx.SetStatusCode(x.status)
	if ct := resp.Header.ContentType(); len(ct) > 0 {
		ctx.Response.Header.SetContentTypeBytes(ct)
	}
	if s, e := openai.ModelSpan(b); s >= 0 && c.model != x.model && x.style != styleGemini {
		ctx.Response.AppendBody(b[:s])
		ctx.Response.AppendBodyString(x.route.escaped)
		ctx.Response.AppendBody(b[e:])
	} else {
		ctx.SetBody(b)
	}
	if x.style == styleOpenAI {
		if s, e := openai.UsageSpan(b); s >= 0 {
			x.usage, _ = openai.DecodeUsage(b[s:e])
		}
	} else if x.style.dialect().decodeResponse(b, &x.resp) == nil {
		x.usage = x.resp.Usage
	}
	return nil
}

// transportError is the client's error for an upstream that could not be
// reached or did not answer in time.
func transportError(err error) *codec.Error {
	if isTimeout(err) {
		return errorf(504, codec.KindTimeout, "upstream_timeout", "The upstream provider did not answer in time.")
	}
	if _, ok := err.(*dialError); ok {
		return errorf(502, codec.KindUpstream, "upstream_unreachable", "The upstream provider could not be reached.")
	}
	return errorf(502, codec.KindUpstream, "upstream_error", "The upstream connection failed.")
}

// transportOutcome classifies a failed upstream exchange for metrics.
func transportOutcome(err error) outcome {
	if isTimeout(err) {
		return outcomeTimeout
	}
	if _, ok := err.(*dialError); ok {
		return outcomeUnreachable
	}
	return outcomeBroken
}

// secondsCeil formats d as whole seconds, rounded up, at least 1.
func secondsCeil(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return string(fasthttp.AppendUint(nil, int(max(s, 1))))
}
