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
	x.resp.Reset()
	x.resp.Usage.Input = estimateTokens(&x.canon)
	ctx.ResetBody()
	ctx.Response.Header.Set(strRosettaTokenCount, "estimate")
	g.answer(ctx, x, x.style.AppendResponse(codec.OpCountTokens, x.buf[:0], &x.resp, codec.StreamInfo{}))
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
