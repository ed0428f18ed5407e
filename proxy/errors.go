package proxy

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
)

func errorf(status int, kind codec.ErrorKind, code, format string, args ...any) *codec.Error {
	return &codec.Error{Status: status, Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// serverError answers a request whose headers or body cannot be read:
// what fasthttp rejects before a handler runs (a body over its limit is
// not one: fasthttp streams it, and the gateway refuses it), and a body
// the gateway fails to read.
func (g *Gateway) serverError(ctx *fasthttp.RequestCtx, err error) {
	x := g.begin(ctx, "server", styleOfPath(ctx.Path()))
	ctx.SetConnectionClose()
	g.fail(ctx, x, unreadable(err))
}

// unreadable is the error of a request that could not be read for err.
func unreadable(err error) *codec.Error {
	var e *codec.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		e = errorf(400, codec.KindInvalidRequest, "bad_request", "The request body ended before its Content-Length.")
	case errors.As(err, new(*fasthttp.ErrSmallBuffer)):
		e = errorf(431, codec.KindInvalidRequest, "request_header_fields_too_large",
			"The request headers are larger than the gateway's limit of %d KiB.", maxHeaderSize>>10)
	case isTimeout(err):
		e = errorf(408, codec.KindInvalidRequest, "request_timeout", "The request was not received in time.")
	default:
		e = errorf(400, codec.KindInvalidRequest, "bad_request", "The request could not be read: malformed HTTP.")
	}
	return e
}

// How long a refused body is read after the 413 (lingerFor at most, and
// while the client sends something every lingerIdle).
const (
	lingerFor  = 2 * time.Second
	lingerIdle = 250 * time.Millisecond
)

// refuseBody sends the 413 written in ctx at once, ends the gateway's side
// of the connection (a FIN after the answer) and then reads and discards
// what the client still sends of its body, until it stops or closes, for
// lingerFor at most: a socket closed with unread data makes the kernel send
// a reset, which can reach a client still writing its body before it read
// the 413, however far the body is over the limit. fasthttp's own write of
// the answer afterwards finds the connection shut and fails unseen. A
// connection that cannot be half-closed is left as fasthttp leaves it.
func refuseBody(ctx *fasthttp.RequestCtx) {
	conn := ctx.Conn()
	hc, ok := conn.(interface{ CloseWrite() error })
	if !ok {
		return
	}
	if _, err := ctx.Response.WriteTo(conn); err != nil || hc.CloseWrite() != nil {
		return
	}
	var buf [16 << 10]byte
	for end := time.Now().Add(lingerFor); time.Now().Before(end); {
		deadline := time.Now().Add(lingerIdle)
		if deadline.After(end) {
			deadline = end
		}
		conn.SetReadDeadline(deadline) //nolint:errcheck
		if _, err := conn.Read(buf[:]); err != nil {
			return // the client's end, or it went quiet
		}
	}
}

func (g *Gateway) notFound(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "unknown", styleOfPath(ctx.Path()))
	g.fail(ctx, x, errorf(404, codec.KindNotFound, "unknown_url",
		"Invalid URL (%s %s)", ctx.Method(), ctx.Path()))
}

func (g *Gateway) methodNotAllowed(ctx *fasthttp.RequestCtx) {
	x := g.begin(ctx, "unknown", styleOfPath(ctx.Path()))
	g.fail(ctx, x, errorf(405, codec.KindInvalidRequest, "method_not_allowed",
		"Method %s is not allowed on %s", ctx.Method(), ctx.Path()))
}

func (g *Gateway) panicked(ctx *fasthttp.RequestCtx, v any) {
	x := g.begin(ctx, "panic", styleOfPath(ctx.Path()))
	g.log.Error("BUG: handler panicked", "id", string(x.id), "panic", v, "stack", string(debug.Stack()))
	g.fail(ctx, x, errorf(500, codec.KindServer, "", "Internal error (request id %s).", x.id))
}

// secretLike matches what providers' error messages echo of credentials:
// whole or masked API keys.
var secretLike = regexp.MustCompile(`(sk|pk|rk|ak|key)-[A-Za-z0-9_*.\-]{6,}|AIza[A-Za-z0-9_\-]{10,}`)

// upstreamError turns an upstream error response into the error the client
// sees: the status (or, for another style's client, the standard one
// nearest to it) and message are kept, anything that looks like a
// credential is removed, and a body the gateway cannot read is not echoed.
func upstreamError(ch *channel, client *dialect, status int, body []byte) *codec.Error {
	if near, own := ch.style.http.OwnStatuses[status]; own && client != ch.style {
		status = near // a status the client's SDK would not know
	}
	e, ok := ch.style.DecodeError(status, body)
	if ok && ch.style != client {
		e.Type = "" // a type of the upstream's style means nothing to this client
	}
	if !ok || e.Message == "" {
		e = codec.Error{Status: status, Kind: codec.KindForStatus(status),
			Message: fmt.Sprintf("The upstream provider returned HTTP %d.", status)}
	}
	e.Message = redact(e.Message, ch)
	if status == 401 || status == 403 {
		// The upstream rejected the gateway's credentials, not the client's.
		e = codec.Error{Status: 502, Kind: codec.KindUpstream, Code: "upstream_auth_failed",
			Message: fmt.Sprintf("The upstream provider rejected the gateway's credentials (HTTP %d): %s", status, e.Message)}
	}
	return &e
}

// redact removes the channel's keys and anything key-like from s.
func redact(s string, ch *channel) string {
	for _, k := range ch.cfg.APIKeys {
		if k != "" {
			s = strings.ReplaceAll(s, k, "[redacted]")
		}
	}
	return secretLike.ReplaceAllString(s, "[redacted]")
}
