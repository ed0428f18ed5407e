package proxy

import (
	"cmp"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/responses"
)

// The Responses API by translation: a Responses request decoded into the
// canonical model (codec/responses) and sent as a chat request to any
// channel that generates (anthropic, gemini, openai-compatible chat
// completions), its answer or stream encoded back as a Response object or
// its typed events.

// opResponsesTranslated is a Responses request on the translated path: the
// upstream generates, as for chat, on the channels that translate the
// Responses API (channel.translates), whether or not they serve chat
// clients.
var opResponsesTranslated = &operation{op: codec.OpGenerate, name: "responses", metered: true}

// respWays are the operations a Responses creation may take on a channel:
// native, relayed to the channel's own /responses (a channel with
// responses: native); translated, through the canonical model to its chat
// API (any other channel whose endpoints have the responses family). A
// nil one is a way the request cannot take. A model served both ways is
// served in its channels' order, and fails over from one way to the other.
type respWays struct {
	native, translated *operation
	// refusal, when set, is the error of a channel that translates
	// the API for a request that cannot be translated (a compaction).
	refusal func(model string) *codec.Error
}

var (
	// waysEither: a new response, kept upstream or by the gateway.
	waysEither = &respWays{native: opResponses, translated: opResponsesTranslated}
	// waysEitherUnstored: a new response with store: false.
	waysEitherUnstored = &respWays{native: opResponsesUnstored, translated: opResponsesTranslated}
	// waysTranslated: a request that continues a conversation the
	// gateway keeps, or holds signatures it tagged.
	waysTranslated = &respWays{translated: opResponsesTranslated}
	// waysCount: an input token count; waysCountTranslated: one that
	// continues a conversation the gateway keeps.
	waysCount           = &respWays{native: opResponsesCount, translated: opResponsesCountTranslated}
	waysCountTranslated = &respWays{translated: opResponsesCountTranslated}
	// waysCompact: a compaction, which only the native way makes.
	waysCompact = &respWays{native: opResponsesCompact, refusal: errCompactTranslated}
)

// takeWay readies x to be served by channel ch the way ch serves it
// (x.ways): ok is false when ch serves it neither way, or when the
// request cannot be translated (e says why: a built-in tool, say).
func (x *exchange) takeWay(ch *channel, body []byte) (ok bool, e *codec.Error) {
	switch w := x.ways; {
	case w.native != nil && ch.serves(w.native.op):
		x.op, x.style, x.includeUsage = w.native, styleOpenAI, false
	case w.translated != nil && ch.translates:
		if !x.canonReady {
			if e := x.decodeResponses(body); e != nil {
				return false, e
			}
			x.canonReady = true
		}
		x.op, x.style, x.includeUsage = w.translated, styleResponses, true
	case w.refusal != nil && ch.translates:
		return false, w.refusal(x.model)
	default:
		return false, nil
	}
	return true, nil
}

// appendURI appends the upstream URL of x's attempt on c; ok is false when
// c's channel does not serve x's operation. A translated Responses request
// goes to the channel's chat API (or its count endpoint), which takeWay
// allowed already; ok is false when its style has none (a count on a
// chat-only channel).
func (x *exchange) appendURI(c candidate) (_ []byte, ok bool) {
	model := cmp.Or(x.target, c.model)
	if x.ways != nil && x.op == x.ways.translated {
		return c.ch.appendPath(x.uri[:0], x.op.op, model, x.stream)
	}
	return c.ch.appendURI(x.uri[:0], x.op.op, model, x.stream)
}

// decodeResponses decodes a Responses request to translate into x.canonical(),
// keeping the names of the members it leaves out for X-Rosetta-Dropped
// (upstreamBody); a request that leaves out nothing costs nothing more.
func (x *exchange) decodeResponses(body []byte) *codec.Error {
	var e *codec.Error
	x.readDropped, e = responses.DecodeRequestDropped(body, x.canonical(), x.readDropped[:0])
	return e
}

// serveResponsesTranslated serves a Responses request through the
// canonical model, whatever the client's exchange was opened as. stored
// are the items of the conversation the request continues (the input and
// output items of the response its previous_response_id names, JSON
// arrays), put before its input. The answer's id is "resp_" and the
// exchange's request id (streamInfo); when the request lets it be stored,
// the gateway's keep hook gets it once answered (keepTranslated).
func (g *Gateway) serveResponsesTranslated(ctx *fasthttp.RequestCtx, x *exchange, body []byte, stored ...[]byte) {
	x.style, x.ways = styleResponses, waysTranslated
	if x.inbound != nil { // decoded whole below: the reader's hold is not needed
		x.inbound.Release()
		x.inbound = nil
	}
	if len(stored) > 0 {
		var e *codec.Error
		if body, e = responses.Prepend(nil, body, stored...); e != nil {
			g.fail(ctx, x, e)
			return
		}
	}
	if e := x.decodeResponses(body); e != nil {
		g.fail(ctx, x, e)
		return
	}
	x.canonReady, x.includeUsage, x.stream = true, true, x.canonical().Stream
	g.serve(ctx, x, opResponsesTranslated, body, []byte(x.canonical().Model))
}

// keepFunc takes a translated response to keep: its id, its status and
// why it is incomplete ("" unless it is), its
// input items (the conversation's so far), output items and usage, as the
// Responses API's JSON, owned by the callee.
type keepFunc func(x *exchange, id, status, incomplete string, input, output, usage []byte)

// keepTranslated hands a translated response r from a channel of style
// origin to the gateway's keep hook, unless the request asked not to be
// stored (store: false) or the gateway keeps nothing. failed: the stream
// broke before its end.
func (g *Gateway) keepTranslated(x *exchange, r *codec.Response, origin string, failed bool) {
	if g.keep == nil || !x.canonical().Session.Store {
		return
	}
	id := x.style.http.IDPrefix + string(x.id)
	status, incomplete := responses.Status(r.Stop), responses.IncompleteReason(r.Stop)
	if failed {
		status, incomplete = "failed", ""
	}
	g.keep(x, id, status, incomplete, responses.AppendInputItems(nil, x.canonical()),
		responses.AppendOutput(nil, r, id, origin), responses.AppendUsage(nil, &r.Usage))
}

// keepStreamed is keepTranslated for a stream the relay translated, once
// it is over: the response as the client's encoder wrote it.
func (g *Gateway) keepStreamed(rl *relay) {
	if enc, ok := rl.tc.Encoder().(*responses.StreamEncoder); ok {
		g.keepTranslated(rl.x, enc.Response(), rl.c.ch.style.Name(), rl.failed != nil || rl.clientGone || rl.tc.Failure() != "")
	}
}
