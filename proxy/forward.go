package proxy

import (
	"bytes"
	"cmp"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
)

var (
	strAuthorization = []byte("Authorization")
	strJSON          = []byte("application/json")
	strEventStream   = []byte("text/event-stream")
	strAny           = []byte("*/*")
	// strRosettaDropped names what a translation left out.
	strRosettaDropped = []byte("X-Rosetta-Dropped")
)

// forward tries the candidates in order until one answers. Failover happens
// only here, before anything was sent to the client. A candidate whose
// style has no endpoint for the operation, or cannot carry the request, is
// passed over.
func (g *Gateway) forward(ctx *fasthttp.RequestCtx, x *exchange, body []byte, cands []candidate, st *forwardState) {
	var f failover
	var buf bodyBuf
	defer buf.release()
	trace := x.trace // kept: an answered attempt may finish x
	for _, c := range cands {
		if x.ways != nil {
			ok, e := x.takeWay(c.ch, body)
			if e != nil { // the request cannot go this way; another channel's may
				f.served, f.last = true, cmp.Or(f.last, e) // an upstream's failure tells more
			}
			if !ok {
				continue
			}
		}
		uri, ok := x.appendURI(c)
		if !ok {
			continue
		}
		if len(x.query) > 0 {
			uri = append(append(uri, '?'), x.query...)
		}
		f.served = true
		x.uri = uri
		up, e := g.upstreamBody(ctx, &buf, x, body, c)
		if e != nil {
			f.last = e // this channel's style cannot carry the request; another may
			continue
		}
		if !g.readyChannel(x, c.ch, &f.limitWait) {
			continue
		}
		x.attempts++
		x.channel, x.channelEscaped = c.ch.name, c.ch.escaped
		var from time.Time // the attempt's start, for the trace
		if trace != nil {
			from = x.tryStart()
		}
		e, retry := g.attempt(ctx, x, up, c, st)
		if e == nil {
			if trace != nil { // until the answer, or its stream, began
				*trace = append(*trace, Attempt{Channel: c.ch.name, Status: ctx.Response.StatusCode(), Duration: time.Since(from)})
			}
			return
		}
		g.releaseChannel(x)
		x.tried(c.ch, e)
		f.failed(e)
		if !retry {
			break
		}
	}
	if x.op.fallback != nil {
		x.clearDropped(ctx) // the gateway answers, not a translation
		x.op.fallback(g, ctx, x)
		return
	}
	g.fail(ctx, x, f.exhausted(x))
}

// failover is what the candidates tried for a request came to, for the
// error of a request none answered. Forward and the realtime dial share
// it, so that both end an exhausted failover by one rule.
type failover struct {
	last       *codec.Error  // the last failure
	retryAfter time.Duration // the shortest wait of the candidates that answered 429
	limitWait  time.Duration // the shortest wait of the candidates at their own limits
	served     bool          // a candidate serves the operation
}

// failed notes e, the failure of a candidate tried.
func (f *failover) failed(e *codec.Error) {
	if e.Status == 429 {
		f.retryAfter = shortestWait(f.retryAfter, e.RateLimit.RetryAfter)
	}
	f.last = e
}

// exhausted is the error of a request no candidate answered: the last
// failure, as the upstream said it (a 429 with the shortest wait of all
// the candidates that answered 429), else noCandidate's.
func (f *failover) exhausted(x *exchange) *codec.Error {
	last := noCandidate(x, f.served, f.last, f.limitWait)
	if last.Status == 429 && f.retryAfter > 0 {
		last.RateLimit.RetryAfter = f.retryAfter
	}
	return last
}

// noCandidate is the error of a request no candidate answered: last, the
// error of the last one tried, or when none was tried a 429 if some were
// at their own rate limits (limitWait, the shortest wait), or a 503 when
// none serves the operation or none could be tried.
func noCandidate(x *exchange, served bool, last *codec.Error, limitWait time.Duration) *codec.Error {
	switch {
	case !served:
		return errNotServed(x)
	case last == nil && limitWait > 0:
		return errChannelsLimited(x, limitWait)
	case last == nil:
		return errorf(503, codec.KindUnavailable, "no_channel_available",
			"No upstream channel for '%s' is available now; retry later.", x.model)
	}
	return last
}

// shortestWait is the shorter of two waits, a wait of 0 being none.
func shortestWait(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// errNotServed is the 503 for a model none of whose channels serves the
// operation's endpoint family (its type has no such API, or its
// configuration leaves it out).
func errNotServed(x *exchange) *codec.Error {
	family := x.op.op.Endpoint()
	if x.ways != nil {
		family = respFamily // whichever way it would have gone
	}
	return errorf(503, codec.KindUnavailable, "endpoint_not_served",
		"No channel of the model '%s' serves %s.", x.model, family)
}

// attempt sends the request to one channel. It returns nil when a response
// went (or is streaming) to the client, else the error and whether another
// channel may be tried.
func (g *Gateway) attempt(ctx *fasthttp.RequestCtx, x *exchange, body []byte, c candidate, st *forwardState) (*codec.Error, bool) {
	req, resp := &st.req, st.response(x)
	upstreamHeaders.fill(&resp.Header) // a new one: with what a stream parked
	g.prepare(st, x, c.ch, body)
	resp.StreamBody = x.stream
	// Registered while its head may be written, a stream too, with no
	// watch (its relay notices a client gone on its own): no other
	// request under its id (a client's own) may be watched meanwhile.
	var w *watch
	if !x.stream {
		x.watch.client, x.watch.since = ctx.Conn(), x.start
		w = &x.watch
	}
	startWaiting(x.id, w)
	err := doWithin(c.ch.client, req, resp, c.ch.cfg.Timeouts.Total-time.Since(x.start))
	stopWaiting(x.id)
	st.resetRequest()

	now := time.Now()
	if x.watch.left.Load() { // fasthttp reports the ended read as a plain error
		st.dropResponse(resp)
		c.ch.breaker.abandon() // no verdict on the channel
		g.log.Info("client went away; upstream request cancelled", "id", string(x.id), "channel", c.ch.name)
		x.status, x.errMsg = 499, "client went away"
		ctx.SetConnectionClose()
		g.finish(x)
		return nil, false
	}
	if err != nil {
		st.dropResponse(resp)
		c.ch.breaker.failure(now)
		c.ch.answered(transportOutcome(err), now)
		g.log.Warn("upstream request failed", "id", string(x.id), "channel", c.ch.name, "err", err)
		x.cause = transportCause(err, c.ch.client.Addr)
		c.ch.stats.noteError(now, x.cause)
		return transportError(err), true
	}
	status := resp.StatusCode()
	c.ch.answered(outcomeOf(status), now)
	if status == 429 || status >= 500 || status == 401 || status == 403 {
		e := upstreamError(c.ch, x.style, status, resp.Body())
		e.UpstreamRequestID = upstreamRequestID(c.ch, &resp.Header)
		if status == 429 || status >= 500 {
			e.RateLimit = c.ch.style.ReadRateLimit(canonicalReader{&resp.Header}, resp.Body())
		}
		st.dropResponse(resp)
		c.ch.breaker.failure(now)
		x.cause = httpCause(status, e.Message)
		c.ch.stats.noteError(now, x.cause)
		g.log.Warn("upstream answered with an error", "id", string(x.id), "channel", c.ch.name,
			"status", status, "err", e.Message)
		return e, true
	}
	if status >= 400 {
		// The client's own mistake: relay it, the channel is healthy.
		e := upstreamError(c.ch, x.style, status, resp.Body())
		e.UpstreamRequestID = upstreamRequestID(c.ch, &resp.Header)
		st.dropResponse(resp)
		c.ch.breaker.success()
		return e, false
	}
	if x.op.served != nil {
		x.op.served(ctx)
	}
	if x.stream && (x.op.media || bytes.HasPrefix(resp.Header.ContentType(), strEventStream)) {
		return g.startStream(ctx, x, c, resp)
	}
	x.ttfb = now.Sub(x.start) // the whole answer is in: no other clock read for its first byte
	if e := g.respond(ctx, x, c, resp); e != nil {
		st.dropResponse(resp)
		c.ch.breaker.failure(now)
		c.ch.broke(outcomeBroken, now)
		c.ch.stats.noteError(now, e.Message)
		return e, true
	}
	passHeaders(&ctx.Response.Header, x, c.ch, &resp.Header)
	c.ch.breaker.success()
	st.dropResponse(resp)
	if x.stream { // resp.StreamBody: a whole answer to a stream request, its body read since now
		g.finish(x)
	} else {
		g.finishAt(x, now) // the answer's arrival: its latency, as its ttfb
	}
	return nil, false
}

// doWithin is client.DoDeadline(req, resp, deadline) for the time left
// until the deadline, as DoDeadline turns the deadline into the request's
// timeout: from one reading of the monotonic clock (time.Since), as
// DoDeadline's time.Until read it, with no deadline made first
// (time.Time.Add, ~70 instructions, only for DoDeadline to take apart).
func doWithin(client *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response, left time.Duration) error {
	req.SetTimeout(left)
	if left <= 0 {
		return fasthttp.ErrTimeout
	}
	return client.Do(req, resp)
}

// bodyBufs holds upstream request bodies. A buffer grown past maxPooledBody
// by a rare huge request is left to the GC rather than kept for every later one.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledBody = 1 << 20

// bodyBuf is a forward's buffer for the bodies it writes, taken from
// bodyBufs when the first is written: a body sent as the client sent it
// needs none.
type bodyBuf struct{ b *[]byte }

func (p *bodyBuf) get() *[]byte {
	if p.b == nil {
		p.b = bodyBufs.Get().(*[]byte)
	}
	return p.b
}

// release hands the buffer back, if one was taken.
func (p *bodyBuf) release() {
	if p.b != nil && cap(*p.b) <= maxPooledBody {
		bodyBufs.Put(p.b)
	}
}

// prepare builds the upstream request for x.uri. Only what the upstream
// needs is sent: never the client's credentials or other headers. A
// request of the last one's head to its URL keeps its header but for the
// request id, which it sets in place: the header a fresh state makes,
// byte for byte (TestForwardStateKeepsHead), with none of its setters.
func (g *Gateway) prepare(st *forwardState, x *exchange, ch *channel, body []byte) {
	req := &st.req
	head := headShape{ch: ch, key: ch.keyFor(x.upKey), method: x.op.method, accept: acceptOf(x),
		body: len(body) > 0 || x.upBody != nil}
	x.upKeyUsed = head.key
	same := st.sameURI(x.uri)
	own := x.contentType != nil || x.upBody != nil // an upload's head is its own: neither kept (makeHead) nor reused
	switch {
	case same && st.headKept && st.head == head && !own:
		id := &(*requestPairsOf(&req.Header))[st.idPair]
		id.value = append(id.value[:0], x.id...) // a token (requestID): one line
	default:
		if st.headKept { // another head, or URL: made again
			req.Header.Reset()
			st.headKept = false
		}
		if !same {
			st.setURI(ch, x.uri, x.target == "") // a response's id makes a URL of its own
		}
		st.makeHead(x, head)
	}
	if x.upBody != nil {
		req.SetBodyStream(x.upBody, x.upLen)
		x.upBody = nil
		return
	}
	req.SetBodyRaw(body)
}

// makeHead sets the header of head on the request, whose header is empty,
// and keeps it for the next request when its pairs can be reached
// (requestPairsOf) and it holds nothing that is the request's own (an
// upload's Content-Type, its boundary, or length).
func (st *forwardState) makeHead(x *exchange, head headShape) {
	h := &st.req.Header
	head.ch.setHeaders(&st.req, head.key)
	h.SetMethod(cmp.Or(head.method, fasthttp.MethodPost))
	if head.body {
		h.SetContentTypeBytes(strJSON)
		if x.contentType != nil {
			h.SetContentTypeBytes(x.contentType)
		}
	}
	pairs := requestPairsOf(h) // no Accept nor X-Request-Id yet
	setNew(h, pairs, strAccept, accepts[head.accept])
	setNew(h, pairs, strRequestID, x.id) // a token (requestID): one line
	h.SetUserAgent("rosetta")
	if st.headKept = pairs != nil && x.contentType == nil && x.upBody == nil; st.headKept {
		st.head, st.idPair = head, len(*pairs)-1
	}
}

// acceptOf is what the upstream's answer to x may be.
func acceptOf(x *exchange) acceptKind {
	switch {
	case x.op.media:
		return acceptAny // audio, text, subtitles, JSON or their SSE
	case x.stream:
		return acceptEvents
	}
	return acceptJSON
}

// passThrough reports whether the client's bytes can go to the channel as
// they are (but for the model name): the same style and API version (versions
// differ in the fields they accept), and no signature tagged by the gateway,
// which must come off (codec.TagSignature).
func passThrough(x *exchange, ch *channel) bool {
	return x.style == ch.style && x.opts.Version == ch.version && !x.tagged && !x.op.translated
}

// relayStyle is the dialect that reads what channel ch answers x on the
// pass-through path: the operation's own when it has one, else the
// channel's.
func (x *exchange) relayStyle(ch *channel) codec.Dialect {
	if x.op.pass != nil {
		return x.op.pass
	}
	return ch.style.Dialect
}

// upstreamBody is the body to send to candidate c: the client's bytes with
// the model spliced in when the channel speaks the client's style (body
// itself when nothing changes: no copy, no buffer), else a translation
// through the canonical model; what it writes goes to buf. Features the
// channel's style cannot carry are named in the X-Rosetta-Dropped response
// header, which is the attempt's: a failed attempt's list goes with it.
func (g *Gateway) upstreamBody(ctx *fasthttp.RequestCtx, buf *bodyBuf, x *exchange, body []byte, c candidate) ([]byte, *codec.Error) {
	x.clearDropped(ctx)
	switch {
	case x.target != "":
		return nil, nil // a call on a response: no body
	case !passThrough(x, c.ch):
		b := buf.get()
		var e *codec.Error
		*b, e = g.translateBody(ctx, (*b)[:0], x, body, c)
		return *b, e
	case x.upload != nil:
		x.upBody, x.upLen = x.upload.upstream(c.model)
		return nil, nil
	case x.inbound != nil && x.inbound.Unchanged(c.model):
		return body, nil
	}
	b := buf.get()
	if x.inbound != nil {
		*b = x.inbound.AppendUpstream((*b)[:0], body, c.model)
	} else {
		*b = x.style.AppendModelRequest((*b)[:0], body, c.model)
	}
	return *b, nil
}

// translateBody appends the request translated for c's style.
func (g *Gateway) translateBody(ctx *fasthttp.RequestCtx, dst []byte, x *exchange, body []byte, c candidate) ([]byte, *codec.Error) {
	if !x.canonReady {
		var e *codec.Error
		if x.inbound != nil {
			e = x.inbound.DecodeRequest(body, x.canonical()) // no second check of the body
		} else {
			e = x.style.DecodeRequest(x.op.op, body, x.canonical(), x.opts)
		}
		if e != nil {
			return dst, e
		}
		x.canonReady = true
	}
	canon := x.canonical()
	canon.Model, canon.Stream = c.model, x.stream
	out, dropped, e := c.ch.style.AppendRequest(x.op.op, dst, canon, codec.Options{Version: c.ch.version})
	if len(x.readDropped)+len(dropped) > 0 {
		x.buf = appendNames(appendNames(x.buf[:0], x.readDropped), dropped)
		ctx.Response.Header.SetCanonical(strRosettaDropped, x.buf)
		x.dropped = true
	}
	return out, e
}

// appendNames appends names to a comma-separated list.
func appendNames(list []byte, names []string) []byte {
	for _, n := range names {
		if len(list) > 0 {
			list = append(list, ", "...)
		}
		list = append(list, n...)
	}
	return list
}

// clearDropped takes back the X-Rosetta-Dropped of an attempt that did
// not answer; only when it was set, since the header's lookup is not free.
func (x *exchange) clearDropped(ctx *fasthttp.RequestCtx) {
	if x.dropped {
		ctx.Response.Header.DelBytes(strRosettaDropped)
		x.dropped = false
	}
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
