package proxy

import (
	"bytes"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
)

var (
	strXAPIKey           = []byte("x-api-key")
	strAnthropicVersion  = []byte("anthropic-version")
	strVendorVersion     = []byte("vendor-version")
	strGoogAPIKey        = []byte("x-goog-api-key")
	strKey               = []byte("key")
	strAlt               = []byte("alt")
	strSSE               = []byte("sse")
	strV1Beta            = []byte("/v1beta/")
	strMessagesPrefix    = []byte("/v1/messages")
	strRosettaTokenCount = "X-Rosetta-Token-Count"
)

// secret is the key as the client's style sends it: OpenAI as a bearer
// token, Anthropic as x-api-key (or a bearer token, which the newest SDKs
// send), Gemini as ?key= or x-goog-api-key.
func secret(ctx *fasthttp.RequestCtx, s style) []byte {
	switch s {
	case styleAnthropic:
		if k := ctx.Request.Header.PeekBytes(strXAPIKey); len(k) > 0 {
			return k
		}
	case styleGemini:
		if k := ctx.QueryArgs().PeekBytes(strKey); len(k) > 0 {
			return k
		}
		return ctx.Request.Header.PeekBytes(strGoogAPIKey)
	}
	return bearer(ctx.Request.Header.PeekBytes(strAuthorization))
}

// styleOfPath guesses the style of a request the router did not place (an
// unknown path, a body over the limit) from its path.
func styleOfPath(path []byte) style {
	switch {
	case bytes.HasPrefix(path, strV1Beta):
		return styleGemini
	case bytes.HasPrefix(path, strMessagesPrefix):
		return styleAnthropic
	}
	return styleOpenAI
}

// anthropicVersion checks the version header of an Anthropic client. It
// answers 400 and returns false when the header is missing or unknown.
func (g *Gateway) anthropicVersion(ctx *fasthttp.RequestCtx, x *exchange) bool {
	v := ctx.Request.Header.PeekBytes(strAnthropicVersion)
	if len(v) == 0 {
		v = ctx.Request.Header.PeekBytes(strVendorVersion)
	}
	switch string(v) {
	case anthropic.Version20230601:
		x.version = anthropic.Version20230601
	case anthropic.Version20261021:
		x.version = anthropic.Version20261021
	case "":
		g.fail(ctx, x, errorf(400, codec.KindInvalidRequest, "", "anthropic-version: header is required"))
		return false
	default:
		g.fail(ctx, x, errorf(400, codec.KindInvalidRequest, "",
			"anthropic-version: unknown version %q (this gateway speaks %s and %s)", v,
			anthropic.Version20230601, anthropic.Version20261021))
		return false
	}
	return true
}

// messages serves POST /v1/messages, Anthropic's style, to any channel.
func (g *Gateway) messages(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "messages")
	x.style = styleAnthropic
	key := g.authenticate(ctx, x)
	if key == nil || !g.anthropicVersion(ctx, x) {
		return // x is already finished
	}
	x.key = key
	body := ctx.PostBody()
	if e := styleAnthropic.dialect().decodeRequest(body, &x.canon, x.version); e != nil {
		g.fail(ctx, x, e)
		return
	}
	x.canonReady, x.stream, x.includeUsage = true, x.canon.Stream, true
	g.generate(ctx, x, body, []byte(x.canon.Model))
}

// countTokens serves POST /v1/messages/count_tokens (see answerCount).
func (g *Gateway) countTokens(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "messages.count_tokens")
	x.style, x.utility = styleAnthropic, true
	key := g.authenticate(ctx, x)
	if key == nil || !g.anthropicVersion(ctx, x) {
		return
	}
	x.key = key
	if e := anthropic.DecodeCountTokens(ctx.PostBody(), &x.canon, anthropic.Options{Version: x.version}); e != nil {
		g.fail(ctx, x, e)
		return
	}
	g.answerCount(ctx, x, anthropic.AppendCountTokensResponse)
}

// answerCount answers a token count: the model's own count when the first
// channel to try has a count endpoint (Anthropic, Gemini) and answers it,
// else an estimate. The X-Rosetta-Token-Count header says which.
func (g *Gateway) answerCount(ctx *fasthttp.RequestCtx, x *exchange, appendCount func([]byte, int) []byte) {
	if !x.key.Allows([]byte(x.canon.Model)) {
		g.fail(ctx, x, errorf(403, codec.KindPermission, "model_not_allowed", "This key may not use the model '%s'.", x.canon.Model))
		return
	}
	rt := g.table.Load().routes[x.canon.Model]
	if rt == nil {
		g.fail(ctx, x, errModelNotFound(x.canon.Model))
		return
	}
	x.model = rt.public
	n, how := g.upstreamCount(x, rt), "upstream"
	if n < 0 {
		n, how = estimateTokens(&x.canon), "estimate"
	}
	x.status = 200
	ctx.Response.Header.Set(strRosettaTokenCount, how)
	ctx.SetContentType("application/json")
	x.buf = appendCount(x.buf[:0], n)
	ctx.SetBody(x.buf)
	g.finish(x)
}

// upstreamCount asks the first channel of rt to try for its count of the
// request's input tokens; -1 when that channel has no count endpoint or
// does not answer one (the caller estimates instead).
func (g *Gateway) upstreamCount(x *exchange, rt *route) int {
	cands, _ := rt.order(x.cands[:0], time.Now())
	if len(cands) == 0 {
		return -1
	}
	c := cands[0]
	d := c.ch.style.dialect()
	if d.appendCount == nil {
		return -1
	}
	x.canon.Model, x.channel = c.model, c.ch.name
	buf := bodyBufs.Get().(*[]byte)
	defer bodyBufs.Put(buf)
	var e *codec.Error
	if *buf, _, e = d.appendCount((*buf)[:0], &x.canon, c.ch.cfg.APIVersion); e != nil {
		return -1
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetBodyRaw(*buf)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentTypeBytes(strJSON)
	req.Header.SetBytesKV(strRequestID, x.id)
	c.ch.setCountRequest(req, c.model)
	if err := c.ch.client.DoTimeout(req, resp, c.ch.cfg.Timeouts.FirstByte); err != nil || resp.StatusCode() != 200 {
		g.log.Warn("upstream token count failed; estimating", "id", string(x.id), "channel", c.ch.name,
			"status", resp.StatusCode(), "err", err)
		return -1
	}
	n, err := d.decodeCount(resp.Body())
	if err != nil {
		return -1
	}
	return n
}

// estimateTokens estimates a request's prompt tokens at four bytes of
// text a token, plus a few for each turn and tool.
func estimateTokens(r *codec.Request) int {
	n := 0
	count := func(parts []codec.Part) {
		for _, p := range parts {
			n += len(p.Text) + len(p.Arguments) + len(p.Name)
			for _, c := range p.Content {
				n += len(c.Text)
			}
			if p.Kind == codec.PartImage || p.Kind == codec.PartDocument {
				n += 4 * 1000 // providers charge images by size; a typical one
			}
		}
	}
	count(r.System)
	for _, m := range r.Messages {
		count(m.Parts)
		n += 4 * 4
	}
	for _, t := range r.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return max(n/4, 1)
}

// geminiPost serves POST /v1beta/models/{model}:{method}: generateContent,
// streamGenerateContent and countTokens, Gemini's style, to any channel.
func (g *Gateway) geminiPost(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "gemini")
	x.style = styleGemini
	model, method, ok := gemini.ParsePath(string(ctx.Path()))
	if !ok || (method != "generateContent" && method != "streamGenerateContent" && method != "countTokens") {
		g.fail(ctx, x, errorf(404, codec.KindNotFound, "", "Unknown method: %s", ctx.Path()))
		return
	}
	x.endpoint, x.utility = "gemini."+method, method == "countTokens"
	key := g.authenticate(ctx, x)
	if key == nil {
		return
	}
	x.key = key
	body := ctx.PostBody()
	if method == "countTokens" {
		if e := gemini.DecodeCountTokensRequest(body, &x.canon); e != nil {
			g.fail(ctx, x, e)
			return
		}
		x.canon.Model = model
		g.answerCount(ctx, x, gemini.AppendCountTokensResponse)
		return
	}
	if e := styleGemini.dialect().decodeRequest(body, &x.canon, ""); e != nil {
		g.fail(ctx, x, e)
		return
	}
	x.stream = method == "streamGenerateContent"
	x.canon.Model, x.canon.Stream = model, x.stream
	x.canonReady, x.includeUsage = true, true
	x.geminiArray = x.stream && !bytes.Equal(ctx.QueryArgs().PeekBytes(strAlt), strSSE)
	g.generate(ctx, x, body, []byte(model))
}

// geminiModels serves GET /v1beta/models and /v1beta/models/{model}.
func (g *Gateway) geminiModels(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "gemini.models")
	x.utility = true
	x.style = styleGemini
	key := g.authenticate(ctx, x)
	if key == nil {
		return
	}
	x.key = key
	ids := g.allowedModels(key)
	ctx.SetContentType("application/json")
	if one, ok := ctx.UserValue("model").(string); ok {
		for _, id := range ids {
			if id == one || "models/"+id == one {
				x.status = 200
				x.buf = gemini.AppendModel(x.buf[:0], id)
				ctx.SetBody(x.buf)
				g.finish(x)
				return
			}
		}
		g.fail(ctx, x, errorf(404, codec.KindNotFound, "", "models/%s is not found.", one))
		return
	}
	x.status = 200
	x.buf = gemini.AppendModelList(x.buf[:0], ids)
	ctx.SetBody(x.buf)
	g.finish(x)
}
