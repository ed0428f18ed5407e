package proxy

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
)

var (
	strV1Beta         = []byte("/v1beta/")
	strMessagesPrefix = []byte("/v1/messages")
)

// open starts an exchange of client style s for operation op (nil for one
// that calls no model): it authenticates the key and, for a style with API
// versions, checks the client's. It returns nil when it has answered
// already (401, 400, 500). The operation is known from here on, so that a
// request refused before routing is counted under its endpoint too.
func (g *Gateway) open(ctx *fasthttp.RequestCtx, op *operation, endpoint string, s *dialect) *exchange {
	x := g.begin(ctx, endpoint, s)
	x.op, x.utility = op, op == nil || !op.metered
	if x.key = g.authenticate(ctx, x); x.key == nil {
		return nil
	}
	if s.http.VersionHeader != "" && !g.clientVersion(ctx, x) {
		return nil
	}
	return x
}

// authenticate returns the caller's key, or answers 401 (500 when the key
// store fails), finishes x and returns nil. A request that ServeAs runs
// carries its key already.
func (g *Gateway) authenticate(ctx *fasthttp.RequestCtx, x *exchange) *Key {
	if p, ok := ctx.UserValue(presetKey{}).(*preset); ok {
		x.trace = &p.attempts
		return g.checkExpiry(ctx, x, p.key)
	}
	secret := secret(ctx, x.style.http)
	k, err := g.keys.find(secret, x.start)
	switch {
	case err != nil:
		g.log.Error("cannot look up key", "id", string(x.id), "err", err)
		g.fail(ctx, x, errorf(500, codec.KindServer, "", "Internal error (request id %s).", x.id))
	case k == nil && len(secret) == 0:
		g.fail(ctx, x, &codec.Error{Status: 401, Kind: codec.KindAuthentication, Code: "missing_api_key",
			Message: "You didn't provide an API key. " + x.style.http.KeyHint})
	case k == nil:
		g.fail(ctx, x, &codec.Error{Status: 401, Kind: codec.KindAuthentication, Code: "invalid_api_key",
			Message: "Incorrect API key provided."})
	default:
		return g.checkExpiry(ctx, x, k)
	}
	return nil
}

// checkExpiry returns k, or answers 401 and returns nil when it has expired.
func (g *Gateway) checkExpiry(ctx *fasthttp.RequestCtx, x *exchange, k *Key) *Key {
	if k.expired() {
		g.fail(ctx, x, &codec.Error{Status: 401, Kind: codec.KindAuthentication, Code: "expired_api_key",
			Message: "This API key has expired."})
		return nil
	}
	return k
}

// secret is the key as the client's style sends it: in its key header or
// query parameter, else as a bearer token (which Anthropic's newest SDKs
// send too).
func secret(ctx *fasthttp.RequestCtx, h *codec.HTTP) []byte {
	if h.KeyHeader != "" {
		if k := ctx.Request.Header.Peek(h.KeyHeader); len(k) > 0 {
			return k
		}
	}
	if h.KeyQuery != "" {
		if k := ctx.QueryArgs().Peek(h.KeyQuery); len(k) > 0 {
			return k
		}
	}
	return bearer(ctx.Request.Header.PeekCanonical(strAuthorization)) // as fasthttp spells a name read
}

// clientVersion checks the API version header of a client whose style has
// versions. It answers 400 and returns false when the header is missing or
// names a version the gateway does not speak.
func (g *Gateway) clientVersion(ctx *fasthttp.RequestCtx, x *exchange) bool {
	h := x.style.http
	v := ctx.Request.Header.Peek(h.VersionHeader)
	if len(v) == 0 {
		v = ctx.Request.Header.Peek(h.VersionAlias)
	}
	for _, known := range h.Versions {
		if string(v) == known {
			x.opts.Version = known
			return true
		}
	}
	if len(v) == 0 {
		g.fail(ctx, x, errorf(400, codec.KindInvalidRequest, "", "%s: header is required", h.VersionHeader))
	} else {
		g.fail(ctx, x, errorf(400, codec.KindInvalidRequest, "", "%s: unknown version %q (this gateway speaks %s)",
			h.VersionHeader, v, joinOr(h.Versions)))
	}
	return false
}

// joinOr joins words as "a, b and c".
func joinOr(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	out := words[0]
	for _, w := range words[1 : len(words)-1] {
		out += ", " + w
	}
	return out + " and " + words[len(words)-1]
}

// styleOfPath guesses the style of a request the router did not place (an
// unknown path, a body over the limit) from its path.
func styleOfPath(path []byte) *dialect {
	switch {
	case bytes.HasPrefix(path, strV1Beta):
		return styleGemini
	case bytes.HasPrefix(path, strMessagesPrefix):
		return styleAnthropic
	}
	return styleOpenAI
}
