package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/store"
)

// The Responses API by translation: what the translated path (the
// Responses wire format as a client style, codec/responses) plugs into.

// translateResponses serves a Responses request that no channel relays
// natively, through the canonical model. prev, when set, is the response
// the request continues, one the gateway keeps: its Input then its Output
// items come before the request's input. x holds the request as
// responsesCreate read it (x.inbound, an *openai.ResponsesRequest).
//
// Until the translated path is built, it answers 501.
func (g *Gateway) translateResponses(ctx *fasthttp.RequestCtx, x *exchange, _ []byte, _ *store.Response) {
	g.fail(ctx, x, errorf(501, codec.KindInvalidRequest, "responses_not_served",
		"The Responses API is served here only by channels that relay it natively (channels[].responses: native), "+
			"and none serves this request's model or conversation."))
}

// keepResponse keeps a translated response in the gateway's store (when
// the request's store is not false): its id and status, its input items
// (those of the whole conversation, prev's included, so that a later
// previous_response_id needs only this response), its output items and
// its usage, as the Responses API's JSON. x's key owns it and x's channel
// made it. It returns at once: the response is found by its id at once,
// and written to the store in the background.
func (g *Gateway) keepResponse(x *exchange, id, status string, input, output, usage []byte) {
	g.responses.remember(&store.Response{ID: id, KeyHash: x.key.Hash, KeyID: x.key.ID, Channel: x.channel,
		Model: x.model, Created: x.start, Status: status, Input: input, Output: output, Usage: usage})
}
