package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// listModels serves GET /v1/models: the public model names the key may use,
// in Anthropic's shape when the client sends Anthropic's headers, else in
// OpenAI's.
func (g *Gateway) listModels(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "models")
	x.utility = true
	if len(ctx.Request.Header.PeekBytes(strXAPIKey)) > 0 &&
		(len(ctx.Request.Header.PeekBytes(strAnthropicVersion)) > 0 || len(ctx.Request.Header.PeekBytes(strVendorVersion)) > 0) {
		x.style = styleAnthropic
	}
	key := g.authenticate(ctx, x)
	if key == nil {
		return // x is already finished
	}
	x.key = key
	ids := g.allowedModels(key)
	x.status = 200
	ctx.SetContentType("application/json")
	if x.style == styleAnthropic {
		x.buf = anthropic.AppendModelList(x.buf[:0], ids, g.started.Unix())
	} else {
		x.buf = openai.AppendModelList(x.buf[:0], ids, g.started.Unix(), "rosetta")
	}
	ctx.SetBody(x.buf)
	g.finish(x)
}

// allowedModels lists the public model names key may use.
func (g *Gateway) allowedModels(key *Key) []string {
	models := g.table.Load().models
	ids := make([]string, 0, len(models))
	for _, m := range models {
		if key.Allows([]byte(m)) {
			ids = append(ids, m)
		}
	}
	return ids
}
