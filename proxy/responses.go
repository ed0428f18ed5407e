package proxy

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/codec/responses"
	"github.com/rosetta-gateway/rosetta/store"
)

// The Responses API: POST /v1/responses, the calls on a response (GET,
// DELETE, cancel, input_items) and input_tokens. A channel serves it
// natively (channels[].responses: native): the request is relayed with the
// model spliced in, and its answer or typed stream relayed as chat's is,
// read by openai.Responses; the gateway remembers which channel and which
// of its keys made each response (respIndex), so that the calls on it and
// a previous_response_id reach that upstream account, and only for the
// key that made it. Otherwise the request is translated through the
// canonical model (serveResponsesTranslated, responses_codec.go) and the
// gateway keeps the response (keepResponse).

var (
	opResponses = &operation{op: codec.OpResponses, name: "responses", metered: true, pass: openai.Responses,
		tracks: true, answered: (*Gateway).trackAnswer}
	// opResponsesUnstored is a creation with store: false, which the
	// upstream keeps not, nor the gateway.
	opResponsesUnstored = &operation{op: codec.OpResponses, name: "responses", metered: true, pass: openai.Responses}
	opResponsesCount    = &operation{op: codec.OpResponsesCount, pass: openai.Responses,
		fallback: (*Gateway).estimateResponsesCount, served: opCountTokens.served}
	// opResponsesCountTranslated is a count asked of a channel that
	// translates the API: its style's own count endpoint (Anthropic's
	// count_tokens, Gemini's countTokens), through the canonical model.
	opResponsesCountTranslated = &operation{op: codec.OpCountTokens,
		fallback: (*Gateway).estimateResponsesCount, served: opCountTokens.served}
	opResponseGet    = &operation{op: codec.OpResponseGet, pass: openai.Responses, method: fasthttp.MethodGet}
	opResponseDelete = &operation{op: codec.OpResponseDelete, pass: openai.Responses, method: fasthttp.MethodDelete,
		answered: (*Gateway).forgetAnswer}
	opResponseCancel = &operation{op: codec.OpResponseCancel, pass: openai.Responses, answered: (*Gateway).trackAnswer}
	opResponseItems  = &operation{op: codec.OpResponseInputItems, pass: openai.Responses, method: fasthttp.MethodGet}
	// opResponsesCompact compacts a conversation into OpenAI's encrypted
	// compaction item, which only OpenAI reads: native channels only.
	opResponsesCompact = &operation{op: codec.OpResponsesCompact, name: "responses.compact", metered: true,
		pass: openai.Responses}
)

// respFamily is the endpoint family of the Responses API.
var respFamily = codec.OpResponses.Endpoint()

// responsesCreate serves POST /v1/responses. The body is checked and read
// for what routing needs (openai.ResponsesRequest). A previous_response_id
// made natively goes to the channel and key that made it; one the gateway
// keeps, or a body holding signatures the gateway tagged, is translated;
// any other request goes to the model's channels in their order, each
// the way it serves the API (respWays).
func (g *Gateway) responsesCreate(ctx *fasthttp.RequestCtx) {
	x, req, body := g.openResponses(ctx, opResponses, "responses")
	if x == nil {
		return
	}
	x.stream, x.tagged = req.Stream, req.Tagged
	var prev *store.Response
	if req.Previous != nil {
		var e *codec.Error
		if prev, e = g.previousResponse(ctx, x, string(req.Previous)); e != nil {
			g.fail(ctx, x, e)
			return
		}
	}
	switch {
	case prev != nil && prev.Native:
		g.servePinned(ctx, x, opResponses, body, req.Model, prev)
	case prev != nil: // one the gateway keeps: its items come before the input
		g.serveResponsesTranslated(ctx, x, body, prev.Input, prev.Output)
	case req.Tagged:
		g.serveResponsesTranslated(ctx, x, body)
	case !req.Store:
		x.ways = waysEitherUnstored
		g.serve(ctx, x, opResponsesUnstored, body, req.Model)
	default:
		x.ways = waysEither
		g.serve(ctx, x, opResponses, body, req.Model)
	}
}

// previousResponse finds the response a request continues: one the key
// made, else the API's 400.
func (g *Gateway) previousResponse(ctx *fasthttp.RequestCtx, x *exchange, id string) (*store.Response, *codec.Error) {
	r, e := g.ownResponse(ctx, x, id)
	if e != nil && e.Status == 404 {
		return nil, &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: "previous_response_id",
			Code: "previous_response_not_found", Message: "Previous response with id '" + id + "' not found."}
	}
	return r, e
}

// ownResponse finds the response id if x's key made it; else the 404
// OpenAI answers for a response that does not exist, so that a key learns
// nothing of another's.
func (g *Gateway) ownResponse(ctx *fasthttp.RequestCtx, x *exchange, id string) (*store.Response, *codec.Error) {
	if openai.ValidResponseID(id) {
		// Not ctx: database/sql may read a context after the handler has
		// returned, when fasthttp has reused the RequestCtx (a data race).
		sctx, cancel := context.WithTimeout(context.Background(), storeLookupTimeout)
		r, err := g.responses.find(sctx, id)
		cancel()
		if err != nil {
			g.log.Error("cannot look up a response", "id", string(x.id), "err", err)
			return nil, errorf(500, codec.KindServer, "", "Internal error (request id %s).", x.id)
		}
		if r != nil && r.KeyHash == x.key.Hash {
			return r, nil
		}
	}
	return nil, errorf(404, codec.KindNotFound, "", "Response with id '%s' not found.", id)
}

// servePinned serves a request of operation op that continues a native
// response: on the channel and upstream key that made it, which alone can
// resolve its id.
func (g *Gateway) servePinned(ctx *fasthttp.RequestCtx, x *exchange, op *operation, body, model []byte, prev *store.Response) {
	rt, ok := g.admitModel(ctx, x, op, body, model)
	if !ok {
		return
	}
	for i, ch := range rt.channels {
		if ch.name == prev.Channel {
			x.upKey = prev.KeyIndex
			g.forwardTo(ctx, x, body, candidate{ch, rt.upstream[i]})
			return
		}
	}
	g.fail(ctx, x, &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: "previous_response_id",
		Message: "Previous response with id '" + prev.ID + "' was made by an upstream that does not serve the model '" +
			rt.public + "'."})
}

// responseCall serves a call on a response (GET, DELETE, cancel,
// input_items) by its id: relayed to the channel and key that made a
// native one, answered from the store for one the gateway keeps.
func (g *Gateway) responseCall(ctx *fasthttp.RequestCtx, endpoint string, op *operation) {
	x := g.open(ctx, op, endpoint, styleOpenAI)
	if x == nil {
		return
	}
	x.utility = true
	id, _ := ctx.UserValue("id").(string)
	r, e := g.ownResponse(ctx, x, id)
	if e != nil {
		g.fail(ctx, x, e)
		return
	}
	x.model = r.Model
	if !r.Native {
		g.answerKept(ctx, x, r)
		return
	}
	t := g.table.Load()
	ch := t.channel(r.Channel)
	if ch == nil {
		g.fail(ctx, x, errorf(503, codec.KindUnavailable, "no_channel_available",
			"The upstream that made response '%s' is not available now.", id))
		return
	}
	upstream := r.Model
	if rt := t.routes[r.Model]; rt != nil {
		x.route = rt
		if i := indexOf(rt.channels, ch); i >= 0 {
			upstream = rt.upstream[i]
		}
	}
	x.target, x.upKey = id, r.KeyIndex
	x.stream = op == opResponseGet && streamAsked(ctx)
	x.query = passedQuery(x.query[:0], ctx.QueryArgs(), op, x.stream)
	g.forwardTo(ctx, x, nil, candidate{ch, upstream})
}

func indexOf(list []*channel, ch *channel) int {
	for i, c := range list {
		if c == ch {
			return i
		}
	}
	return -1
}

// streamAsked reports whether a GET of a response asks for its stream:
// with stream=true in its query, as the API says, or in a JSON body, as
// OpenAI's SDKs send it.
func streamAsked(ctx *fasthttp.RequestCtx) bool {
	if string(ctx.QueryArgs().Peek("stream")) == "true" {
		return true
	}
	f := [...]rawjson.Field{{Key: "stream"}}
	b := ctx.Request.Body()
	return len(b) > 0 && rawjson.Lookup(b, f[:], false) == nil && f[0].Start >= 0 &&
		rawjson.KindOf(b[f[0].Start:f[0].End]) == rawjson.KindTrue
}

// passedQuery appends the query parameters of the client's that the
// upstream's call op takes (a retrieval's starting_after, include and
// include_obfuscation, and stream=true when stream; a listing's paging
// and include), and no others.
func passedQuery(dst []byte, q *fasthttp.Args, op *operation, stream bool) []byte {
	names := []string{"include", "include[]"}
	switch op {
	case opResponseGet:
		names = append(names, "starting_after", "include_obfuscation")
	case opResponseItems:
		names = append(names, "limit", "order", "after", "before")
	}
	var out fasthttp.Args
	if stream {
		out.Add("stream", "true")
	}
	for k, v := range q.All() {
		for _, n := range names {
			if string(k) == n {
				out.AddBytesKV(k, v)
			}
		}
	}
	return out.AppendBytes(dst)
}

// answerKept answers a call on a response the gateway keeps.
func (g *Gateway) answerKept(ctx *fasthttp.RequestCtx, x *exchange, r *store.Response) {
	switch x.op {
	case opResponseGet:
		if streamAsked(ctx) {
			g.fail(ctx, x, &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: "stream",
				Message: "Response '" + r.ID + "' was not created in the background: it cannot be streamed again."})
			return
		}
		g.answer(ctx, x, openai.AppendStoredResponse(x.buf[:0], &openai.StoredResponse{ID: r.ID, Model: r.Model,
			Status: r.Status, Incomplete: r.Incomplete, Created: r.Created.Unix(), Output: r.Output, Usage: r.Usage}))
	case opResponseDelete:
		sctx, cancel := context.WithTimeout(context.Background(), storeLookupTimeout)
		err := g.responses.forget(sctx, r.ID)
		cancel()
		if err != nil {
			g.log.Error("cannot delete a response", "id", string(x.id), "err", err)
			g.fail(ctx, x, errorf(500, codec.KindServer, "", "Internal error (request id %s).", x.id))
			return
		}
		g.answer(ctx, x, openai.AppendDeletedResponse(x.buf[:0], r.ID))
	case opResponseCancel:
		g.fail(ctx, x, errorf(400, codec.KindInvalidRequest, "",
			"Only responses created with background=true can be cancelled; '%s' was not.", r.ID))
	case opResponseItems:
		q := ctx.QueryArgs()
		p, e := openai.ParseItemPage(q.Peek("limit"), q.Peek("order"), q.Peek("after"), q.Peek("before"))
		if e != nil {
			g.fail(ctx, x, e)
			return
		}
		b, err := openai.AppendItemPage(x.buf[:0], r.Input, p)
		if err != nil {
			g.log.Error("a stored response's input items cannot be read", "id", string(x.id), "err", err)
			g.fail(ctx, x, errorf(500, codec.KindServer, "", "Internal error (request id %s).", x.id))
			return
		}
		g.answer(ctx, x, b)
	}
}

// responsesInputTokens serves POST /v1/responses/input_tokens, on the
// model's channels in their order as a creation is (respWays): relayed to
// a channel that serves the API natively, translated to the count
// endpoint of one that translates it and whose style has one (Anthropic,
// Gemini); when none answers (a chat-only channel has no count), the
// gateway's estimate. X-Rosetta-Token-Count says which (as count_tokens).
// A previous_response_id is counted as a creation would read it: a
// native one by the channel and key that made it, one the gateway keeps
// with its conversation put first.
func (g *Gateway) responsesInputTokens(ctx *fasthttp.RequestCtx) {
	x, req, body := g.openResponses(ctx, opResponsesCount, "responses.input_tokens")
	if x == nil {
		return
	}
	ways := waysCount
	if req.Tagged { // signatures the gateway tagged go to no /responses
		ways = waysCountTranslated
	}
	g.serveAfter(ctx, x, opResponsesCount, req, body, ways, func(prev *store.Response) { g.countKept(ctx, x, body, prev) })
}

// serveAfter serves a Responses request of operation op: one without a
// previous_response_id on the model's channels, the ways it may take;
// one with, where the previous response lives: a native one on the
// channel and key that made it, one the gateway keeps by kept.
func (g *Gateway) serveAfter(ctx *fasthttp.RequestCtx, x *exchange, op *operation, req *openai.ResponsesRequest,
	body []byte, ways *respWays, kept func(prev *store.Response)) {
	if req.Previous == nil {
		x.ways = ways
		g.serve(ctx, x, op, body, req.Model)
		return
	}
	prev, e := g.previousResponse(ctx, x, string(req.Previous))
	switch {
	case e != nil:
		g.fail(ctx, x, e)
	case prev.Native:
		g.servePinned(ctx, x, op, body, req.Model, prev)
	default:
		kept(prev)
	}
}

// countKept counts a request that continues a conversation the gateway
// keeps, its stored items first: translated (no upstream knows the id),
// else the estimate of the whole.
func (g *Gateway) countKept(ctx *fasthttp.RequestCtx, x *exchange, body []byte, prev *store.Response) {
	body, e := responses.Prepend(nil, body, prev.Input, prev.Output)
	if e == nil {
		e = x.decodeResponses(body)
	}
	if e != nil {
		g.fail(ctx, x, e)
		return
	}
	x.canonReady, x.ways = true, waysCountTranslated
	g.serve(ctx, x, opResponsesCountTranslated, body, []byte(x.canonical().Model))
}

// responsesCompact serves POST /v1/responses/compact, OpenAI's compaction
// of a conversation: relayed to the model's channels that serve the API
// natively, a previous_response_id to the channel and key that made it.
// Its answer holds an encrypted item that only OpenAI can read, so no
// translation can make one: a channel that translates the API is passed
// over, and a model served by those alone (or a previous_response_id the
// gateway keeps) is the API's 400 saying so.
func (g *Gateway) responsesCompact(ctx *fasthttp.RequestCtx) {
	x, req, body := g.openResponses(ctx, opResponsesCompact, "responses.compact")
	if x == nil {
		return
	}
	if req.Tagged { // items of another provider's, from a translated conversation
		g.fail(ctx, x, errCompactTranslated(string(req.Model)))
		return
	}
	g.serveAfter(ctx, x, opResponsesCompact, req, body, waysCompact, func(*store.Response) {
		g.fail(ctx, x, errCompactTranslated(string(req.Model)))
	})
}

// errCompactTranslated is the 400 for a compaction no native channel can
// make: the conversation or the model's channels are translated ones.
func errCompactTranslated(model string) *codec.Error {
	return errorf(400, codec.KindInvalidRequest, "unsupported_endpoint",
		"POST /v1/responses/compact is served only by channels that serve the Responses API natively "+
			"(OpenAI's compaction item is encrypted for OpenAI); the model '%s' or its conversation is served "+
			"by translation through another API here.", model)
}

// openResponses opens the exchange of a Responses request of operation op
// and reads its body; nil when it was answered (401, 400).
func (g *Gateway) openResponses(ctx *fasthttp.RequestCtx, op *operation, endpoint string) (*exchange, *openai.ResponsesRequest, []byte) {
	x := g.open(ctx, op, endpoint, styleOpenAI)
	if x == nil {
		return nil, nil, nil
	}
	body := ctx.PostBody()
	req := openai.AcquireResponsesRequest()
	x.inbound = req
	if e := req.Parse(body); e != nil {
		g.fail(ctx, x, e)
		return nil, nil, nil
	}
	return x, req, body
}

// estimateResponsesCount answers an input token count no channel
// answered with the gateway's estimate (codec.EstimateTokens, as
// count_tokens's): of the request in the canonical form (as decoded
// already, with a kept conversation put first), or of the bytes
// of its input, instructions and tools when it holds what the translated
// style refuses (a built-in tool).
func (g *Gateway) estimateResponsesCount(ctx *fasthttp.RequestCtx, x *exchange) {
	n := 1
	if x.canonReady || responses.DecodeRequest(ctx.PostBody(), x.canonical()) == nil {
		n = codec.EstimateTokens(x.canonical())
	} else if req, ok := x.inbound.(*openai.ResponsesRequest); ok {
		n = codec.EstimateText(req.TextBytes)
	}
	ctx.ResetBody()
	ctx.Response.Header.Set(strRosettaTokenCount, "estimate")
	g.answer(ctx, x, openai.ResponsesCount(x.buf[:0], n))
}

// trackAnswer remembers the response a whole answer names (a creation, a
// cancellation), before the client can ask for it.
func (g *Gateway) trackAnswer(x *exchange, c candidate, body []byte) {
	id, status := openai.ResponseState(body)
	if len(id) > 0 {
		g.remember(x, c, id, status)
	}
}

// trackRelayed remembers the response a stream names, as soon as its id
// is read (before the client can read it) and with its last status when
// the stream ends.
func (g *Gateway) trackRelayed(x *exchange, c candidate, r *codec.Relay) {
	g.remember(x, c, r.ID, r.Status)
}

func (g *Gateway) remember(x *exchange, c candidate, id, status []byte) {
	g.responses.remember(&store.Response{ID: string(id), KeyHash: x.key.Hash, KeyID: x.key.ID, Channel: c.ch.name,
		KeyIndex: x.upKeyUsed, Model: x.model, Created: x.start, Status: string(status), Native: true})
}

// forgetAnswer forgets a response the upstream deleted.
func (g *Gateway) forgetAnswer(x *exchange, _ candidate, _ []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.responses.forget(ctx, x.target); err != nil {
		g.log.Error("cannot forget a deleted response", "id", string(x.id), "err", err)
	}
}

// keepResponse keeps a translated response (the keep hook of
// keepTranslated): its id, status and why it is incomplete, its input items (those of the whole
// conversation, so that a later previous_response_id needs only this
// response), its output items and its usage, as the Responses API's JSON.
// x's key owns it and x's channel made it. It returns at once: the
// response is found by its id at once, and written to the store in the
// background.
func (g *Gateway) keepResponse(x *exchange, id, status, incomplete string, input, output, usage []byte) {
	g.responses.remember(&store.Response{ID: id, KeyHash: x.key.Hash, KeyID: x.key.ID, Channel: x.channel,
		Model: x.model, Created: x.start, Status: status, Incomplete: incomplete, Input: input, Output: output, Usage: usage})
}
