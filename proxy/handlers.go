package proxy

import (
	"bytes"
	"net/url"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// The handlers are the gateway's endpoints, one per client style and
// operation. Each opens the exchange (request id, key, API version), reads
// the request in its style, and hands it to the pipeline (pipeline.go).

var (
	strAlt = []byte("alt")
	strSSE = []byte("sse")
)

// chatCompletions serves POST /v1/chat/completions. The body is only
// checked and three fields read (openai.ChatRequest): on the pass-through
// path it goes upstream with the model name (and the usage option of
// streams) spliced in.
func (g *Gateway) chatCompletions(ctx *fasthttp.RequestCtx) {
	g.serveOpenAI(ctx, "chat.completions", opGenerate, openai.PassChat)
}

// completions serves POST /v1/completions, the legacy text completions,
// relayed as chat completions are to the channels that serve them.
func (g *Gateway) completions(ctx *fasthttp.RequestCtx) {
	g.serveOpenAI(ctx, "completions", opComplete, openai.PassCompletions)
}

// embeddings serves POST /v1/embeddings, relayed to the channels that
// serve them with the model name spliced in; encoding_format, dimensions
// and the vectors pass untouched.
func (g *Gateway) embeddings(ctx *fasthttp.RequestCtx) {
	g.serveOpenAI(ctx, "embeddings", opEmbed, openai.PassEmbeddings)
}

// rerank serves POST /v1/rerank, the rerank API that Cohere- and
// Jina-compatible servers share. It is decoded whole, so that bad
// documents get a 400 before any upstream is called; it goes to a channel
// of the client's style with the model spliced in, and is translated for a
// cohere channel.
func (g *Gateway) rerank(ctx *fasthttp.RequestCtx) {
	if x := g.open(ctx, opRerank, "rerank", styleOpenAI); x != nil {
		g.serveDecoded(ctx, x, opRerank, "")
	}
}

// imageGenerations serves POST /v1/images/generations, relayed with the
// model spliced in; the answer's usage counts when it has one.
func (g *Gateway) imageGenerations(ctx *fasthttp.RequestCtx) {
	g.serveOpenAI(ctx, "images.generations", opImage, openai.PassImages)
}

// speech serves POST /v1/audio/speech: JSON in, audio out, relayed to the
// client as the upstream sends it.
func (g *Gateway) speech(ctx *fasthttp.RequestCtx) {
	g.serveOpenAI(ctx, "audio.speech", opSpeech, openai.PassSpeech)
}

// The uploads: multipart/form-data relayed with the model part spliced.
func (g *Gateway) imageEdits(ctx *fasthttp.RequestCtx) { g.serveForm(ctx, "images.edits", opImageEdit) }
func (g *Gateway) imageVariations(ctx *fasthttp.RequestCtx) {
	g.serveForm(ctx, "images.variations", opImageVary)
}
func (g *Gateway) transcriptions(ctx *fasthttp.RequestCtx) {
	g.serveForm(ctx, "audio.transcriptions", opTranscribe)
}
func (g *Gateway) translations(ctx *fasthttp.RequestCtx) {
	g.serveForm(ctx, "audio.translations", opTranslate)
}

// serveOpenAI serves an OpenAI-style JSON endpoint whose request is
// relayed as it is to channels of the client's style.
func (g *Gateway) serveOpenAI(ctx *fasthttp.RequestCtx, endpoint string, op *operation, kind openai.PassKind) {
	x := g.open(ctx, op, endpoint, styleOpenAI)
	if x == nil {
		return // already answered
	}
	body := ctx.PostBody()
	st := takeForwardState()
	req := &st.chat
	x.inbound = req
	if e := req.ParseAs(body, kind); e != nil {
		g.fail(ctx, x, e)
	} else {
		x.stream, x.includeUsage, x.tagged = req.Stream || op.download, req.IncludeUsage, req.Tagged
		x.units = req.Units
		g.serveWith(ctx, x, op, body, req.Model, st)
	}
	st.release()
}

// messages serves POST /v1/messages, Anthropic's style.
func (g *Gateway) messages(ctx *fasthttp.RequestCtx) {
	if x := g.open(ctx, opGenerate, "messages", styleAnthropic); x != nil {
		g.serveDecoded(ctx, x, opGenerate, "")
	}
}

// countTokens serves POST /v1/messages/count_tokens.
func (g *Gateway) countTokens(ctx *fasthttp.RequestCtx) {
	if x := g.open(ctx, opCountTokens, "messages.count_tokens", styleAnthropic); x != nil {
		g.serveDecoded(ctx, x, opCountTokens, "")
	}
}

// geminiPost serves POST /v1beta/models/{model}:{method}: generateContent,
// streamGenerateContent (JSON array, or SSE with alt=sse), countTokens,
// embedContent and batchEmbedContents, Gemini's style.
func (g *Gateway) geminiPost(ctx *fasthttp.RequestCtx) {
	model, method, ok := gemini.ParsePath(string(ctx.Path()))
	op := opGenerate
	switch method {
	case gemini.MethodGenerate, gemini.MethodStream:
	case gemini.MethodCountTokens:
		op = opCountTokens
	case gemini.MethodBatchEmbed:
		op = opEmbed
	case gemini.MethodEmbed:
		op = opEmbedOne
	default:
		ok = false
	}
	if !ok {
		g.fail(ctx, g.begin(ctx, "gemini", styleGemini),
			errorf(404, codec.KindNotFound, "", "Unknown method: %s", ctx.Path()))
		return
	}
	x := g.open(ctx, op, "gemini."+method, styleGemini)
	if x == nil {
		return
	}
	if x.stream = method == gemini.MethodStream; x.stream && !bytes.Equal(ctx.QueryArgs().PeekBytes(strAlt), strSSE) {
		x.framing = gemini.Framing(true)
	}
	g.serveDecoded(ctx, x, op, model)
}

// serveDecoded serves a request of a style that is decoded whole into the
// canonical form before routing. A model named in the path (Gemini's)
// stands for the body's, and the path says whether to stream.
func (g *Gateway) serveDecoded(ctx *fasthttp.RequestCtx, x *exchange, op *operation, model string) {
	body, canon := ctx.PostBody(), x.canonical()
	if e := x.style.DecodeRequest(op.op, body, canon, x.opts); e != nil {
		g.fail(ctx, x, e)
		return
	}
	if canon.Embed.Single != op.single {
		g.fail(ctx, x, errorf(400, codec.KindInvalidRequest, "",
			"embedContent takes one 'content', batchEmbedContents a list of 'requests'."))
		return
	}
	if model != "" {
		canon.Model, canon.Stream = model, x.stream
	} else {
		x.stream = canon.Stream && op == opGenerate
	}
	x.canonReady, x.includeUsage = true, true
	g.serve(ctx, x, op, body, []byte(canon.Model))
}

// listModels serves GET /v1/models: the public model names the key may use.
func (g *Gateway) listModels(ctx *fasthttp.RequestCtx) {
	s := modelsStyle(ctx)
	x := g.open(ctx, nil, "models", s)
	if x == nil {
		return
	}
	g.answer(ctx, x, s.AppendModelList(x.buf[:0], g.allowedModels(x.key), g.started.Unix()))
}

// retrieveModel serves GET /v1/models/{model}, the SDKs' models.retrieve:
// the model object as listModels lists it, and a 404, as those APIs answer,
// for a model the key may not use or that does not exist. The model may
// hold slashes (org/model).
func (g *Gateway) retrieveModel(ctx *fasthttp.RequestCtx) {
	s := modelsStyle(ctx)
	x := g.open(ctx, nil, "models.retrieve", s)
	if x == nil {
		return
	}
	// The router matches the path as sent: an SDK escapes the model's
	// slashes (org%2Fmodel).
	id, _ := ctx.UserValue("model").(string)
	if u, err := url.PathUnescape(id); err == nil {
		id = u
	}
	if slices.Contains(g.allowedModels(x.key), id) {
		g.answer(ctx, x, s.AppendModel(x.buf[:0], id, g.started.Unix()))
		return
	}
	g.fail(ctx, x, errorf(404, codec.KindNotFound, "model_not_found",
		"The model `%s` does not exist or you do not have access to it.", id))
}

// modelsStyle is the style of a request to /v1/models, which OpenAI and
// Anthropic share: Anthropic's when the client sends Anthropic's key and
// version headers, else OpenAI's.
func modelsStyle(ctx *fasthttp.RequestCtx) *dialect {
	h := styleAnthropic.http
	if len(ctx.Request.Header.Peek(h.KeyHeader)) > 0 &&
		(len(ctx.Request.Header.Peek(h.VersionHeader)) > 0 || len(ctx.Request.Header.Peek(h.VersionAlias)) > 0) {
		return styleAnthropic
	}
	return styleOpenAI
}

// geminiModels serves GET /v1beta/models and /v1beta/models/{model}, each
// model with the methods its channels serve.
func (g *Gateway) geminiModels(ctx *fasthttp.RequestCtx) {
	x := g.open(ctx, nil, "gemini.models", styleGemini)
	if x == nil {
		return
	}
	t := g.table.Load()
	ids := g.allowedModels(x.key)
	one, ok := ctx.UserValue("model").(string)
	if !ok {
		methods := make([]gemini.Methods, len(ids))
		for i, id := range ids {
			methods[i] = t.routes[id].geminiMethods()
		}
		g.answer(ctx, x, gemini.AppendModelList(x.buf[:0], ids, methods))
		return
	}
	for _, id := range ids {
		if id == one || "models/"+id == one {
			g.answer(ctx, x, gemini.AppendModel(x.buf[:0], id, t.routes[id].geminiMethods()))
			return
		}
	}
	g.fail(ctx, x, errorf(404, codec.KindNotFound, "", "models/%s is not found.", one))
}

// answer ends a utility exchange (no model call) with a 200 JSON body.
func (g *Gateway) answer(ctx *fasthttp.RequestCtx, x *exchange, body []byte) {
	x.buf, x.status, x.utility = body, 200, true
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	g.finish(x)
}

// allowedModels lists the public model names key may use.
func (g *Gateway) allowedModels(key *Key) []string {
	models := g.table.Load().models
	ids := make([]string, 0, len(models))
	for _, m := range models {
		if key.Allows([]byte(m)) {
			ids = append(ids, m)
		}
	}
	return ids
}
