package proxy

import (
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// passThrough reports whether the client's bytes can go to the channel as
// they are (but for the model name): same style, for Anthropic the same API
// version, since versions differ in which fields they accept, and no
// signature tagged by the gateway, which must come off (codec.TagSignature).
func passThrough(x *exchange, ch *channel) bool {
	return x.style == ch.style && (x.style != styleAnthropic || x.version == ch.cfg.APIVersion) && !x.tagged
}

// upstreamBody appends the body to send to candidate c: the client's bytes
// with the model spliced in when the channel speaks the client's style, else
// a translation through the canonical model. Features the channel's style
// cannot carry are named in the X-Rosetta-Dropped response header.
func (g *Gateway) upstreamBody(ctx *fasthttp.RequestCtx, dst []byte, x *exchange, body []byte, c candidate) ([]byte, *codec.Error) {
	if passThrough(x, c.ch) {
		switch x.style {
		case styleOpenAI:
			return x.req.AppendUpstream(dst, body, c.model), nil
		case styleAnthropic:
			return spliceModel(dst, body, c.model), nil
		default:
			return append(dst, body...), nil // Gemini: the model is in the URL
		}
	}
	if !x.canonReady {
		var e *codec.Error
		if x.style == styleOpenAI {
			// chatCompletions parsed body: the strings need no second check.
			e = x.req.DecodeRequest(body, &x.canon)
		} else {
			e = x.style.dialect().decodeRequest(body, &x.canon, x.version)
		}
		if e != nil {
			return dst, e
		}
		x.canonReady = true
	}
	x.canon.Model, x.canon.Stream = c.model, x.stream
	out, dropped, e := c.ch.style.dialect().appendRequest(dst, &x.canon, c.ch.cfg.APIVersion)
	if len(dropped) > 0 {
		ctx.Response.Header.Set("X-Rosetta-Dropped", strings.Join(dropped, ", "))
	}
	return out, e
}

// spliceModel appends body with its top-level "model" value replaced.
func spliceModel(dst, body []byte, model string) []byte {
	f := [...]rawjson.Field{{Key: "model"}}
	if rawjson.Lookup(body, f[:], false) != nil || f[0].Start < 0 {
		return append(dst, body...)
	}
	dst = append(dst, body[:f[0].Start]...)
	dst = rawjson.AppendString(dst, model)
	return append(dst, body[f[0].End:]...)
}

// streamInfo is what the client style's encoder needs to know about an
// answer from a channel of style upstream.
func (x *exchange) streamInfo(upstream style) codec.StreamInfo {
	id := string(x.id)
	switch x.style {
	case styleAnthropic:
		id = "msg_" + id
	case styleOpenAI:
		id = "chatcmpl-" + id
	}
	return codec.StreamInfo{
		ID:           id,
		Model:        x.model,
		Created:      x.start.Unix(),
		IncludeUsage: x.includeUsage,
		InputTokens:  max(x.bodyLen/4, 1), // an estimate, until the upstream reports
		Origin:       upstream.String(),
	}
}
