package proxy

// Request bodies are bounded by server.max_body, and the upload routes' by
// server.max_upload. A body over its limit is a 413 in the client's style,
// which the client must be able to read however much more it was still
// sending (refuseBody, errors.go).

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/config"
)

// uploadPaths are the routes whose bodies are multipart uploads, bounded by
// server.max_upload rather than server.max_body.
var uploadPaths = [...]string{"/v1/images/edits", "/v1/images/variations", "/v1/audio/transcriptions", "/v1/audio/translations"}

// isUpload reports whether a request is a POST to an upload route. The
// path is compared as sent (the query cut off): any other spelling of it
// gets the JSON limit, the smaller one, and the router's redirect.
func isUpload(h *fasthttp.RequestHeader) bool {
	if !h.IsPost() {
		return false
	}
	path := h.RequestURI()
	if i := bytes.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	for _, p := range uploadPaths {
		if string(path) == p {
			return true
		}
	}
	return false
}

// bodyLimit is the largest body accepted for a request of these headers.
func (g *Gateway) bodyLimit(h *fasthttp.RequestHeader) config.ByteSize {
	if isUpload(h) {
		return g.cfg.Server.MaxUpload
	}
	return g.cfg.Server.MaxBody
}

// headerReceived gives each request its body limit once its headers are
// read, before fasthttp reads the body: a larger Content-Length is
// refused then, unread (serverError's 413). A chunked body is refused
// once the limit's worth is read, and fasthttp then resets the request,
// its path included (Request.ReadBody): what the 413 must say is kept
// aside for it.
func (g *Gateway) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	limit := g.bodyLimit(h)
	if h.ContentLength() == -1 {
		g.chunked.remember(h, refusal{style: styleOfPath(h.RequestURI()), limit: limit})
	}
	return fasthttp.RequestConfig{MaxRequestBodySize: int(limit)}
}

// refusal is what the 413 of a request says: in which style, what limit.
type refusal struct {
	style *dialect
	limit config.ByteSize
}

// refusalOf is the 413 of the request in ctx, whose body went over its
// limit.
func (g *Gateway) refusalOf(ctx *fasthttp.RequestCtx) refusal {
	if r, ok := g.chunked.take(&ctx.Request.Header); ok {
		return r
	}
	return refusal{style: styleOfPath(ctx.Path()), limit: g.bodyLimit(&ctx.Request.Header)}
}

// chunkedHeads keeps the refusal of each request sent chunked while its
// body is read, by its header (a pooled RequestCtx's, reused from request
// to request): taken by serverError, forgotten by the handler. Requests
// with a Content-Length, nearly all, cost one atomic load.
type chunkedHeads struct {
	m sync.Map // *fasthttp.RequestHeader → refusal
	n atomic.Int64
}

func (c *chunkedHeads) remember(h *fasthttp.RequestHeader, r refusal) {
	if _, loaded := c.m.Swap(h, r); !loaded {
		c.n.Add(1)
	}
}

func (c *chunkedHeads) take(h *fasthttp.RequestHeader) (refusal, bool) {
	if c.n.Load() == 0 {
		return refusal{}, false
	}
	v, ok := c.m.LoadAndDelete(h)
	if !ok {
		return refusal{}, false
	}
	c.n.Add(-1)
	return v.(refusal), true
}

func (c *chunkedHeads) forget(h *fasthttp.RequestHeader) { c.take(h) }
