package proxy

import (
	"bytes"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/store"
)

// A request goes through the same stages whatever its style and operation,
// each in a file of its own:
//
//	authenticate.go  open: the key, the client's API version
//	handlers.go      read the request in the client's style
//	pipeline.go      serve: allow the model, route it, admit it, forward it
//	limits.go        admit: the key's rate limits
//	forward.go       forward: the candidates in turn, with failover and
//	                 the breaker (breaker.go), over the channel's
//	                 connections (channel.go, timedconn.go)
//	respond.go       a whole answer, relayed or translated
//	relay.go         a streamed answer, relayed or translated
//	realtime.go      a realtime WebSocket session, relayed frame by frame
//	account.go       finish: rate-limit settlement, metrics, the access
//	                 log (accesslog.go) and the usage row
//
// exchange.go holds the request's state through them all.

// operation is what a request asks of a model: the codec operation, and
// how the pipeline treats it.
type operation struct {
	op codec.Op
	// name is the endpoint usage rows record, whatever the client's style:
	// chat, embeddings, images.edits, audio.speech, ...
	name string
	// unit is what the endpoint is billed by besides tokens (a
	// store.Unit...), counted from the upstream's answer (usage's Units)
	// or else from the request (exchange.units).
	unit string
	// metered: the request is rate-limited and leaves a usage row.
	metered bool
	// translated: the request always goes through the canonical form,
	// even to a channel of the client's style (a token count is small,
	// and its model may sit deep in the body: Gemini's
	// generateContentRequest.model).
	translated bool
	// fallback answers when no channel could; nil fails with the error of
	// the last channel tried.
	fallback func(g *Gateway, ctx *fasthttp.RequestCtx, x *exchange)
	// served, when set, marks a response from a channel.
	served func(ctx *fasthttp.RequestCtx)
	// estimates: an answer that reports no usage (Gemini's embeddings
	// have none) is counted with the gateway's estimate of the input,
	// and the client is told so (estimateUsage).
	estimates bool
	// single: the request embeds one content and is answered with one
	// embedding (Gemini's embedContent), where the codec.OpEmbed of
	// every other request embeds a list; it goes up as a list of one, so
	// it is translated even to a channel of its style.
	single bool
	// usage, when set, reads the tokens of a relayed answer whose API
	// reports them in a shape of its own (rerank's: usage.total_tokens,
	// Cohere's meta), where the style's ReadRelayed would not see them.
	usage func(body []byte) (codec.Usage, bool)
	// eventUsage, when set, reads the usage of one event of a media
	// answer streamed as SSE (a transcription's transcript.text.done).
	eventUsage func(ev []byte) (codec.Usage, bool)
	// media: the answer is relayed as bytes with the upstream's content
	// type (images' JSON, audio, a transcript as text or subtitles, or
	// their SSE), not read as the style's JSON; download: it is a file,
	// always relayed as it arrives, never held whole.
	media, download bool
	// form: the request is a multipart/form-data upload; files are the
	// names of which it needs a file part (one of them).
	form  bool
	files []string
	// pass, when set, is the dialect that reads the answers and events
	// relayed to a client of the upstream's style, in place of the
	// upstream style's own (the Responses API's, on an OpenAI channel).
	pass codec.Dialect
	// method is the upstream request's HTTP method, "" for POST; a GET
	// or DELETE has no body.
	method string
	// answered, when set, hears of a whole answer relayed (pass-through,
	// status 2xx) before the client gets it: the Responses API's
	// bookkeeping.
	answered func(g *Gateway, x *exchange, c candidate, body []byte)
	// tracks: the answer names a response the gateway remembers (its
	// stream's lifecycle events, or answered for a whole one).
	tracks bool
}

var (
	opGenerate    = &operation{op: codec.OpGenerate, name: "chat", metered: true}
	opComplete    = &operation{op: codec.OpComplete, name: "completions", metered: true}
	opEmbed       = &operation{op: codec.OpEmbed, name: "embeddings", metered: true, estimates: true}
	opEmbedOne    = &operation{op: codec.OpEmbed, name: "embeddings", metered: true, estimates: true, single: true, translated: true}
	opRerank      = &operation{op: codec.OpRerank, name: "rerank", unit: store.UnitSearchUnits, metered: true, usage: codec.RerankUsage}
	opImage       = &operation{op: codec.OpImage, name: "images.generations", unit: store.UnitImages, metered: true, media: true, usage: openai.MediaUsage}
	opImageEdit   = &operation{op: codec.OpImageEdit, name: "images.edits", unit: store.UnitImages, metered: true, media: true, form: true, files: []string{"image", "image[]"}, usage: openai.MediaUsage}
	opImageVary   = &operation{op: codec.OpImageVariation, name: "images.variations", unit: store.UnitImages, metered: true, media: true, form: true, files: []string{"image"}, usage: openai.MediaUsage}
	opSpeech      = &operation{op: codec.OpSpeech, name: "audio.speech", unit: store.UnitCharacters, metered: true, media: true, download: true}
	opTranscribe  = &operation{op: codec.OpTranscribe, name: "audio.transcriptions", unit: store.UnitSeconds, metered: true, media: true, form: true, files: []string{"file"}, usage: openai.MediaUsage, eventUsage: openai.TranscriptUsage}
	opTranslate   = &operation{op: codec.OpTranslate, name: "audio.translations", unit: store.UnitSeconds, metered: true, media: true, form: true, files: []string{"file"}, usage: openai.MediaUsage, eventUsage: openai.TranscriptUsage}
	opRealtime    = &operation{op: codec.OpRealtime, name: "realtime", metered: true}
	opCountTokens = &operation{op: codec.OpCountTokens, name: "count_tokens", translated: true, fallback: (*Gateway).estimateCount,
		served: func(ctx *fasthttp.RequestCtx) { ctx.Response.Header.Set(strRosettaTokenCount, "upstream") }}
)

// errModelNotFound is the 503 for a model no channel serves.
func errModelNotFound[T string | []byte](model T) *codec.Error {
	return errorf(503, codec.KindNotFound, "model_not_found",
		"The model '%s' does not exist or is not served by this gateway.", model)
}

// serve routes a request, whatever its style, once its handler has read
// it: the key's model allow-list, the route, the rate limits, then the
// candidates in order.
func (g *Gateway) serve(ctx *fasthttp.RequestCtx, x *exchange, op *operation, body, model []byte) {
	st := takeForwardState()
	g.serveWith(ctx, x, op, body, model, st)
	st.release()
}

// serveWith is serve with a forward state the caller took (and releases).
func (g *Gateway) serveWith(ctx *fasthttp.RequestCtx, x *exchange, op *operation, body, model []byte, st *forwardState) {
	if cands, ok := g.candidates(ctx, x, op, body, model, st.cands[:0]); ok {
		g.forward(ctx, x, body, cands, st)
	}
}

// forwardTo forwards the request to c alone.
func (g *Gateway) forwardTo(ctx *fasthttp.RequestCtx, x *exchange, body []byte, c candidate) {
	st := takeForwardState()
	st.cands[0] = c
	g.forward(ctx, x, body, st.cands[:1], st)
	st.release()
}

// forwardState is what a request holds while it is routed and tried: its
// candidates, and the upstream request and whole answer of its attempts,
// in one pooled value (one pool round trip where three were). It is not
// kept in the exchange: a stream, once it runs, needs only the candidate
// it relays from and its own answer (its relay holds both), and an
// exchange held for a stream's length is smaller without them.
type forwardState struct {
	cands candList
	req   fasthttp.Request
	resp  fasthttp.Response // a whole answer's; a stream's is acquired of its own, for its relay
	// uri is the URL req holds parsed (uriKept) from the last attempt
	// made with the state: resetRequest keeps it.
	uri     []byte
	uriKept bool
	// head is what req's header was made for (headKept: resetRequest
	// keeps it, with the URL), idPair the index of its X-Request-Id.
	head     headShape
	headKept bool
	idPair   int
	// chat reads an OpenAI-style request (serveOpenAI), which takes the
	// state before it reads: a pool round trip less than a reader of the
	// codec's pool. The exchange lets go of it (Release) when it ends
	// (a request that does not parse, before it is forwarded) or its stream
	// starts, as it did of a pooled one.
	chat keptChat
}

// keptChat is an openai.ChatRequest that a forward state keeps: its
// Release empties it, the request's body let go, rather than hand it to
// the codec's pool.
type keptChat struct{ openai.ChatRequest }

func (r *keptChat) Release() { r.ChatRequest = openai.ChatRequest{} }

type candList [maxCandidates]candidate

// forwardStates makes states whose whole-answer response keeps its body
// buffer for the next answer, no pool round trip (up to maxKeptAnswer):
// Reset leaves the setting as it is.
var forwardStates = sync.Pool{New: func() any {
	st := new(forwardState)
	st.resp.KeepBodyBuffer = true
	return st
}}

func takeForwardState() *forwardState { return forwardStates.Get().(*forwardState) }

// release lets go of the channels and hands the state back. Candidates
// are appended from the first entry on, so the first empty one ends those
// used: the rest, most of the list (a request has a candidate or two), is
// neither cleared nor brought into the cache to be.
func (st *forwardState) release() {
	for i := range st.cands {
		if st.cands[i].ch == nil {
			break
		}
		st.cands[i] = candidate{}
	}
	forwardStates.Put(st)
}

// sameURI reports whether the request holds uri parsed already, as the
// last attempt made with the state left it: most requests go to the URL
// the one before went to, and a comparison costs a fraction of finding the
// channel's parsed URL and copying it (channel.setURI).
func (st *forwardState) sameURI(uri []byte) bool {
	return st.uriKept && bytes.Equal(st.uri, uri)
}

// setURI sets the URL of the request, one it does not hold (sameURI).
func (st *forwardState) setURI(ch *channel, uri []byte, keep bool) {
	if st.uriKept {
		st.req.SetURI(nil) // as Reset leaves it
	}
	if st.uriKept = ch.setURI(&st.req, uri, keep); st.uriKept {
		st.uri = append(st.uri[:0], uri...)
	}
}

// resetRequest empties the request for the next attempt, but for the URL
// it holds parsed (setURI) and the header it keeps (headKept): what
// Request.Reset does, of what an attempt sets (the client sets the
// timeout of each).
func (st *forwardState) resetRequest() {
	switch {
	case !st.uriKept:
		st.req.Reset()
		st.headKept = false
	case st.headKept:
		st.req.ResetBody()
	default:
		st.req.Header.Reset()
		st.req.ResetBody()
	}
}

// headShape is what an upstream request's header is made of but its
// request id (and its URL, which the state keeps apart): a request whose
// head is the last one's, to the same URL, sends the same header but for
// the id, which is all prepare sets then.
type headShape struct {
	ch     *channel
	key    int    // the channel's key (keyFor)
	method string // the operation's, "" for POST
	accept acceptKind
	body   bool // the request has a body: a content type
}

type acceptKind uint8

const (
	acceptJSON acceptKind = iota
	acceptAny
	acceptEvents
)

var accepts = [...][]byte{acceptJSON: strJSON, acceptAny: strAny, acceptEvents: strEventStream}

// response is the answer of an attempt at x: the state's own for a whole
// one, else one its relay may keep.
func (st *forwardState) response(x *exchange) *fasthttp.Response {
	if x.stream {
		return fasthttp.AcquireResponse()
	}
	return &st.resp
}

// maxKeptAnswer bounds the body buffer a state keeps: a rare huge answer's
// is left to the GC.
const maxKeptAnswer = 64 << 10

// dropResponse lets go of resp, an answer response gave.
func (st *forwardState) dropResponse(resp *fasthttp.Response) {
	if resp == &st.resp {
		resp.ReleaseBody(maxKeptAnswer)
		resp.Reset()
		return
	}
	fasthttp.ReleaseResponse(resp)
}

// candidates allows the model, routes it and admits the request under the
// key's limits, and returns the channels to try in order, appended to dst.
// It answers (403, 503, 429) and returns false when the request goes no
// further.
func (g *Gateway) candidates(ctx *fasthttp.RequestCtx, x *exchange, op *operation, body, model []byte, dst []candidate) ([]candidate, bool) {
	rt, ok := g.admitModel(ctx, x, op, body, model)
	if !ok {
		return nil, false
	}
	cands, reopen := rt.order(dst)
	if len(cands) == 0 && op.fallback == nil {
		ctx.Response.Header.Set("Retry-After", secondsCeil(reopen))
		g.fail(ctx, x, errorf(503, codec.KindUnavailable, "no_channel_available",
			"No upstream channel for '%s' is available now; retry later.", rt.public))
		return nil, false
	}
	return cands, true
}

// admitModel allows the model, routes it and admits the request under the
// key's limits. It answers (403, 503, 429) and returns false when the
// request goes no further.
func (g *Gateway) admitModel(ctx *fasthttp.RequestCtx, x *exchange, op *operation, body, model []byte) (*route, bool) {
	x.op, x.utility = op, !op.metered
	if !x.key.Allows(model) {
		g.fail(ctx, x, errorf(403, codec.KindPermission, "model_not_allowed",
			"This key may not use the model '%s'.", model))
		return nil, false
	}
	rt := g.table.Load().routes[string(model)]
	if rt == nil {
		g.fail(ctx, x, errModelNotFound(model))
		return nil, false
	}
	x.model, x.route, x.bodyLen = rt.public, rt, len(body)
	if x.inbound == nil { // its reader has looked already
		x.tagged = x.style.Tagged(body)
	}
	x.reserve = int64(len(body) / 4)
	if op.metered && !g.admit(ctx, x, x.reserve) {
		return nil, false
	}
	return rt, true
}
