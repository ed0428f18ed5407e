package proxy

// Request bodies are bounded by server.max_body, and the upload routes' by
// server.max_upload. fasthttp hands every body over as a stream
// (StreamRequestBody), having read only what came with the headers: the
// gateway reads a JSON body whole before routing (readBody, here), and an
// upload into its spool (upload.go). A body over its limit is a 413 in the
// client's style, which the client must be able to read however much more
// it was still sending (refuseBody).

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/config"
)

// uploadHead reports whether a request's head is that of a POST to an
// upload route (postRoutes). It finds the path as the handler does
// (PathOriginal), so that both give a request the same limit: any other
// spelling of an upload route gets the JSON limit, the smaller one, and
// the router's redirect.
func (g *Gateway) uploadHead(h *fasthttp.RequestHeader) bool {
	if !h.IsPost() {
		return false
	}
	return g.posts.find(headPath(h)).upload
}

// headPath is the path fasthttp's URI parse would find in the head's
// target. An origin-form target ("/v1/x?q", the usual one) is cut here at
// its query or fragment; any other (absolute-form "http://h/v1/x", none
// with no Host) is parsed by fasthttp itself.
func headPath(h *fasthttp.RequestHeader) []byte {
	target := h.RequestURI()
	if len(target) > 1 && target[0] == '/' && target[1] != '/' && len(h.Host()) > 0 {
		// Two vector searches: IndexAny's byte loop took three times as long.
		if i := bytes.IndexByte(target, '?'); i >= 0 {
			target = target[:i]
		}
		if i := bytes.IndexByte(target, '#'); i >= 0 {
			target = target[:i]
		}
		return target
	}
	u := fasthttp.AcquireURI()
	defer fasthttp.ReleaseURI(u)
	u.Parse(h.Host(), target) //nolint:errcheck // as the handler's parse: a bad target's path is what was found
	return append([]byte(nil), u.PathOriginal()...)
}

// headerReceived lets the handler of a request whose Content-Length is
// over its limit run as soon as a byte of the body is in, to refuse it:
// fasthttp waits for the first 8 KiB (or the whole body when smaller) before
// it runs a handler, which a client that sent its headers and waits for an
// answer would not send.
func (g *Gateway) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	size := h.ContentLength()
	if size <= int(min(g.cfg.Server.MaxBody, g.cfg.Server.MaxUpload)) {
		return fasthttp.RequestConfig{} // under either limit: the route need not be found
	}
	limit := g.cfg.Server.MaxBody
	if g.uploadHead(h) {
		limit = g.cfg.Server.MaxUpload
	}
	if size > int(limit) {
		return fasthttp.RequestConfig{MaxRequestBodySize: 1}
	}
	return fasthttp.RequestConfig{}
}

// errBodyTooLarge ends the read of a body over its limit.
var errBodyTooLarge = errors.New("request body over its limit")

// readBody reads the body of a request that is not an upload, whole, so
// that its handler finds it in ctx.PostBody(). A body that came with its
// headers (most do) is used where fasthttp read it: read again from the
// stream into those same bytes, which copies nothing (copy skips a source
// that is its destination) and leaves the server no unread body to drain
// through a copy of its own. It answers and returns false when the body
// is over server.max_body, or cannot be read.
func (g *Gateway) readBody(ctx *fasthttp.RequestCtx) bool {
	stream := ctx.RequestBodyStream()
	if stream == nil {
		return true // a request made in the process (ServeAs): whole already
	}
	err := g.readStream(ctx, stream)
	switch {
	case err == errBodyTooLarge:
		g.refuseTooLarge(ctx, g.begin(ctx, "server", styleOfPath(ctx.Path())), g.cfg.Server.MaxBody)
	case err != nil:
		g.serverError(ctx, err)
	}
	return err == nil
}

// readStream reads the body in stream into the request, as readBody.
func (g *Gateway) readStream(ctx *fasthttp.RequestCtx, stream io.Reader) error {
	limit := int(g.cfg.Server.MaxBody)
	size := ctx.Request.Header.ContentLength()
	if size > limit {
		return errBodyTooLarge // refused before a byte more is read
	}
	// The stream stays the server's to drain; closing it leaves in the
	// body what fasthttp read of it with the headers.
	ctx.Request.CloseBodyStream() //nolint:errcheck // a server stream closes without error
	if size == 0 {
		return nil
	}
	b := ctx.Request.SwapBody(nil)[:0]
	if size > 0 && cap(b) >= size { // most bodies: one read, in place
		n, _ := stream.Read(b[:size]) // what it fails with, the next read fails with too
		b = b[:n]
	}
	var err error
	if len(b) != size {
		b, err = readAtMost(stream, b, size, limit)
	}
	ctx.Request.SwapBody(b)
	return err
}

// readAtMost reads the body from r into b (from its start: r gives again
// what b holds, into the same bytes), size bytes when size >= 0, else up
// to its end; more than limit bytes is errBodyTooLarge, and a body that
// ends before size bytes, io.ErrUnexpectedEOF (fasthttp's server stream
// reports a peer gone as the body's end).
func readAtMost(r io.Reader, b []byte, size, limit int) ([]byte, error) {
	want := size
	if size < 0 {
		want = limit + 1
	}
	for {
		if len(b) == cap(b) {
			grow := want - len(b) // a known size at once
			if size < 0 {
				grow = min(max(cap(b), 4<<10), grow)
			}
			b = slices.Grow(b, grow)
		}
		n, err := r.Read(b[len(b):min(cap(b), want)])
		b = b[:len(b)+n]
		switch {
		case len(b) > limit:
			return b, errBodyTooLarge
		case err == io.EOF && size >= 0 && len(b) < size:
			return b, io.ErrUnexpectedEOF
		case err == io.EOF || size >= 0 && len(b) == size:
			return b, nil
		case err != nil:
			return b, err
		}
	}
}

// refuseTooLarge answers the 413 of x, whose body is over limit, and ends
// the connection (refuseBody).
func (g *Gateway) refuseTooLarge(ctx *fasthttp.RequestCtx, x *exchange, limit config.ByteSize) {
	ctx.SetConnectionClose()
	g.fail(ctx, x, errorf(413, codec.KindTooLarge, "request_too_large",
		"Request body is larger than the gateway's limit of %s.", limit))
	refuseBody(ctx)
}
