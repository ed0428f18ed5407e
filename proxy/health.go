package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// healthz answers while the process serves HTTP at all.
func (g *Gateway) healthz(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"status":"ok"}`)
}

// readyz answers 200 when at least one channel can take traffic, 503 when
// every circuit is open; the body lists each channel's circuit state.
func (g *Gateway) readyz(ctx *fasthttp.RequestCtx) {
	ready := false
	b := []byte(`{"channels":[`)
	for i, ch := range g.channels {
		if i > 0 {
			b = append(b, ',')
		}
		state := ch.breaker.String()
		ready = ready || state != "open"
		b = append(b, `{"name":`...)
		b = rawjson.AppendString(b, ch.name)
		b = append(b, `,"type":`...)
		b = rawjson.AppendString(b, ch.kind)
		b = append(b, `,"circuit":"`...)
		b = append(b, state...)
		b = append(b, `"}`...)
	}
	b = append(b, `],"status":`...)
	if ready {
		b = append(b, `"ready"}`...)
	} else {
		b = append(b, `"unavailable"}`...)
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
