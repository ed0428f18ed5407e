package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// listModels serves GET /v1/models: the public model names the key may use.
func (g *Gateway) listModels(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "models")
	key := g.authenticate(ctx, x)
	if key == nil {
		return // x is already finished
	}
	x.key = key
	ids := make([]string, 0, len(g.models))
	for _, m := range g.models {
		if key.Allows([]byte(m)) {
			ids = append(ids, m)
		}
	}
	x.status = 200
	ctx.SetContentType("application/json")
	x.buf = openai.AppendModelList(x.buf[:0], ids, g.started.Unix(), "rosetta")
	ctx.SetBody(x.buf)
	g.finish(x)
}
