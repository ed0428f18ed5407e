package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
)

const strRosettaTokenCount = "X-Rosetta-Token-Count"

// estimateCount answers a token count that no channel answered (none of
// the model's channels has a count endpoint, or none could be reached)
// with the gateway's estimate. X-Rosetta-Token-Count says so.
func (g *Gateway) estimateCount(ctx *fasthttp.RequestCtx, x *exchange) {
	r := x.response()
	r.Reset()
	r.Usage.Input = codec.EstimateTokens(x.canonical())
	ctx.ResetBody()
	ctx.Response.Header.Set(strRosettaTokenCount, "estimate")
	g.answer(ctx, x, x.style.AppendResponse(codec.OpCountTokens, x.buf[:0], r, codec.StreamInfo{}))
}

// estimateUsage is the usage of an answer that reports none: the gateway's
// estimate of the input, marked so, and X-Rosetta-Token-Count says so.
func (x *exchange) estimateUsage(ctx *fasthttp.RequestCtx) codec.Usage {
	ctx.Response.Header.Set(strRosettaTokenCount, "estimate")
	return codec.Usage{Input: x.estimate(), Estimated: true}
}
