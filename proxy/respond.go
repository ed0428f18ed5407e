package proxy

import (
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/codec"
)

// errUnreadable is the client's error for an upstream answer that is not
// what its style's API sends.
var errUnreadable = &codec.Error{Status: 502, Kind: codec.KindUpstream, Code: "upstream_error",
	Message: "The upstream provider's response could not be read."}

// respond answers with a whole (non-streamed) upstream response: relayed
// with the public model name put back when the styles match, else
// translated. It fails only when the upstream's answer cannot be read.
func (g *Gateway) respond(ctx *fasthttp.RequestCtx, x *exchange, c candidate, resp *fasthttp.Response) *codec.Error {
	b := resp.Body()
	x.status = resp.StatusCode() // x.ttfb set by attempt, as it read the clock
	ctx.SetStatusCode(x.status)
	if !passThrough(x, c.ch) {
		r := x.response()
		if err := c.ch.style.DecodeResponse(x.op.op, b, r); err != nil {
			g.log.Warn("cannot read the upstream's response", "id", string(x.id), "channel", c.ch.name, "err", err)
			return errUnreadable
		}
		if x.op.estimates && r.Usage == (codec.Usage{}) {
			r.Usage = x.estimateUsage(ctx)
		}
		if x.op.metered {
			x.usage = r.Usage
		}
		ctx.SetContentType("application/json")
		x.buf = x.style.AppendResponse(x.op.op, x.buf[:0], r, x.streamInfo(c.ch.style))
		ctx.SetBody(x.buf)
		if x.op == opResponsesTranslated {
			g.keepTranslated(x, r, c.ch.style.Name(), false)
		}
		return nil
	}
	if x.op.media {
		relayMedia(ctx, x, resp)
		return nil
	}
	r, ok := x.relayStyle(c.ch).ReadRelayed(b)
	if !ok {
		g.log.Warn("the upstream's response is not JSON", "id", string(x.id), "channel", c.ch.name)
		return errUnreadable
	}
	if ct := resp.Header.ContentType(); len(ct) > 0 {
		ctx.Response.Header.SetContentTypeBytes(ct)
	}
	switch {
	case r.Again: // readers would differ: the answer that reads alike
		model := ""
		if c.model != x.model {
			model = x.route.escaped
		}
		ctx.Response.SetBodyRaw(r.AppendRelayed(nil, b, model))
	case r.ModelStart >= 0 && c.model != x.model:
		ctx.Response.AppendBody(b[:r.ModelStart])
		ctx.Response.AppendBodyString(x.route.escaped)
		ctx.Response.AppendBody(b[r.ModelEnd:])
	default:
		takeBody(&ctx.Response, resp)
	}
	if x.op.answered != nil && x.status < 300 {
		x.op.answered(g, x, c, b)
	}
	if x.op.metered {
		x.usage = r.Usage
		switch {
		case x.op.usage != nil:
			x.usage, _ = x.op.usage(b)
		case x.op.estimates && !r.HasUsage:
			x.usage = x.estimateUsage(ctx)
		}
	}
	return nil
}

// strUpstreamRequestID is where a client finds the upstream's id of its
// answer; its own X-Request-Id stays the gateway's.
var strUpstreamRequestID = []byte("X-Upstream-Request-Id")

// upstreamRequestID is the id the upstream gave its answer h, "" when it
// sent none or its style names none: copied, h goes back to its pool.
func upstreamRequestID(ch *channel, h *fasthttp.ResponseHeader) string {
	return string(findHeader(h, &ch.style.requestID))
}

// passHeaders tells the client, once an upstream's successful answer (whole,
// or a stream's first event) is committed to, what the upstream's headers up
// say that the client needs, in its own style's words: the upstream's
// request id, the headers its style passes on (OpenAI's
// openai-processing-ms), and the upstream's quota. Nothing else of up
// reaches the client: not its cookies, credentials or organization, nor
// any header the gateway does not know. When up has none of these it
// allocates nothing. The values passed from an upstream of the client's
// style move to h (passSameStyle): up is not read for them afterwards.
func passHeaders(h *fasthttp.ResponseHeader, x *exchange, ch *channel, up *fasthttp.ResponseHeader) {
	// A key with limits of its own was told them by admit, and they win:
	// they are what the client must respect (the gateway answers 429 by
	// them), while the upstream's quota is the channel's, shared by every
	// key routed to it, and would tell this client it may send more than
	// its key allows.
	keyLimited := x.key.Limits != (ratelimit.Limits{})
	if x.style == ch.style {
		// A key limited on the model alone was told the model's limits
		// by admit: the upstream's quota replaces them, as it always has.
		passSameStyle(h, x.style, up, keyLimited, x.modelLimit != nil)
		return
	}
	in, out := canonicalReader{up}, canonicalWriter{h}
	if id := findHeader(up, &ch.style.requestID); len(id) > 0 {
		h.SetCanonical(strUpstreamRequestID, id)
	}
	for _, name := range x.style.http.PassedHeaders {
		if v := in.Peek(name); len(v) > 0 {
			out.SetBytesV(name, v)
		}
	}
	if keyLimited {
		return
	}
	rl := ch.style.ReadRateLimit(in, nil)
	if rl.Requests.Limit > 0 || rl.Tokens.Limit > 0 {
		rl.RetryAfter = 0 // an answer is no reason to wait
		x.buf = x.style.SetRateLimit(out, x.buf[:0], rl)
	}
}

// canonicalReader and canonicalWriter read and write fasthttp headers by
// the names the codec spells as fasthttp normalizes them (a test holds
// every style to it): fasthttp's own Peek and SetBytesV copy and normalize
// the name at each call, which cost half of relaying a cross-style
// answer's headers. An upstream's answer keeps its names as sent (the
// channel's client does not normalize them), so the reader ignores case.
type (
	canonicalReader struct{ h *fasthttp.ResponseHeader }
	canonicalWriter struct{ h *fasthttp.ResponseHeader }
)

// Peek folds name only once a header of its length shows up: most
// names asked for are not in the answer.
func (r canonicalReader) Peek(name string) []byte {
	var f foldedName // on the stack: no allocation
	match := func(k []byte) bool {
		if len(k) != len(name) {
			return false
		}
		if f.n == 0 {
			f = foldName(name)
		}
		return f.matches(k)
	}
	if len(name) == 0 {
		return nil
	}
	return findPair(r.h, name[0], match)
}

func (w canonicalWriter) SetBytesV(name string, v []byte) {
	w.h.SetCanonical(unsafe.Slice(unsafe.StringData(name), len(name)), v)
}

// passSameStyle is passHeaders for an upstream of the client's own style,
// in one pass over its headers: the same words mean the same to the
// client, so they are copied as they are (under their names as fasthttp
// spells them), where reading OpenAI's six quota headers and writing them
// again cost about 2 µs a request. h holds none of the names yet but the
// quota headers admit wrote when the key has limits (keyLimited: none
// passed) or its model has (quotaSet), so each name is appended to h's
// pairs unless h may hold it: such a quota header, or one the upstream
// sent twice, is set, replacing it, as it always was. An appended value is
// moved, not copied (withMovedPair): up's header is dropped or parked once
// its headers are passed, so its pair gives its value's storage to h's and
// takes the storage h's pair had.
func passSameStyle(h *fasthttp.ResponseHeader, s *dialect, up *fasthttp.ResponseHeader, keyLimited, quotaSet bool) {
	from, to := responsePairsOf(up), responsePairsOf(h)
	if from == nil {
		setSameStyle(h, s, up, keyLimited)
		return
	}
	// The two headers' pairs are held in locals for the loop: through
	// their pointers, each pair read and appended would load them again.
	in, out := *from, *to
	var added uint64 // the passed headers appended, by their bits
	for i := range in {
		kv := &in[i] // as the upstream spelled it
		if s.passedLens&lenBit(len(kv.key)) == 0 {
			continue // most headers: passed over by their length alone
		}
		p := s.passed[passSlot(kv.key)]
		if p == nil {
			continue // passed over with no call
		}
		switch p = p.find(kv.key); {
		case p == nil || p.quota && keyLimited:
		case added&p.bit != 0 || p.quota && quotaSet:
			*to = out
			h.SetCanonical(p.canonical, kv.value)
			out = *to
		default:
			added |= p.bit
			out = withMovedPair(out, p.canonical, &kv.value)
		}
	}
	*to = out
}

// setSameStyle is passSameStyle through fasthttp's setters, for a
// fasthttp whose pairs are laid out otherwise.
func setSameStyle(h *fasthttp.ResponseHeader, s *dialect, up *fasthttp.ResponseHeader, keyLimited bool) {
	for k, v := range up.All() {
		if p := s.passes(k); p != nil && !(p.quota && keyLimited) {
			h.SetCanonical(p.canonical, v)
		}
	}
}

// relayMedia answers with a whole media answer as the upstream sent it,
// with its content type, and counts the tokens it reports, if any.
func relayMedia(ctx *fasthttp.RequestCtx, x *exchange, resp *fasthttp.Response) {
	ctx.Response.Header.SetContentTypeBytes(resp.Header.ContentType())
	b := takeBody(&ctx.Response, resp)
	if x.op.usage != nil {
		x.usage, _ = x.op.usage(b)
	}
}

// takeBody makes the upstream's answer body the client's, with no copy:
// the two responses trade their body buffers. The body returned stays
// valid until the client's response is written.
func takeBody(to, from *fasthttp.Response) []byte {
	b := from.Body()
	from.SwapBody(to.SwapBody(b)[:0])
	return b
}

// streamInfo is what the client style's encoder needs to know about an
// answer from a channel of style upstream.
func (x *exchange) streamInfo(upstream *dialect) codec.StreamInfo {
	return codec.StreamInfo{
		ID:           x.style.http.IDPrefix + string(x.id),
		Model:        x.model,
		Created:      x.start.Unix(),
		IncludeUsage: x.includeUsage,
		InputTokens:  x.estimate(), // until the upstream reports
		Origin:       upstream.Name(),
		Request:      x.canonical(),
	}
}

// estimate is the request's input tokens as the gateway estimates them
// (codec.EstimateTokens, as count_tokens answers without the upstream's
// count); a quarter of the body's bytes when it was not decoded.
func (x *exchange) estimate() int {
	if x.canonReady {
		return codec.EstimateTokens(x.canonical())
	}
	return max(x.bodyLen/4, 1)
}
