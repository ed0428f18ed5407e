package proxy

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/bytedance/sonic"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// demoUpstream is the built-in demo channel: an OpenAI-compatible server
// inside the process, on an in-memory listener, whose model answers with a
// deterministic reply streamed word by word at a fixed pace. It lets the
// gateway run, and be tried end to end, with no network and no provider key.
type demoUpstream struct {
	ln     *fasthttputil.InmemoryListener
	server *fasthttp.Server
	pace   time.Duration
}

func newDemoUpstream(pace time.Duration) *demoUpstream {
	d := &demoUpstream{ln: fasthttputil.NewInmemoryListener(), pace: pace}
	d.server = &fasthttp.Server{Handler: d.serve, NoDefaultServerHeader: true, Logger: quietLogger{},
		DisablePreParseMultipartForm: true} // uploads are read by readDemoForm
	go d.server.Serve(d.ln) //nolint:errcheck // ends when the listener closes
	return d
}

func (d *demoUpstream) dial() (net.Conn, error) { return d.ln.Dial() }

func (d *demoUpstream) close() {
	d.server.Shutdown() //nolint:errcheck
	d.ln.Close()        //nolint:errcheck
}

func (d *demoUpstream) serve(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/v1/chat/completions":
		d.chat(ctx)
	case "/v1/completions":
		d.complete(ctx)
	case "/v1/embeddings":
		demoEmbed(ctx)
	case "/v1/rerank":
		demoRerank(ctx)
	case "/v1/images/generations", "/v1/images/edits", "/v1/images/variations":
		demoImages(ctx)
	case "/v1/audio/speech":
		d.speech(ctx)
	case "/v1/audio/transcriptions", "/v1/audio/translations":
		d.transcribe(ctx)
	case "/v1/realtime":
		d.realtime(ctx)
	default:
		demoError(ctx, &codec.Error{Status: 404, Kind: codec.KindNotFound, Message: "demo: unknown path"})
	}
}

func demoError(ctx *fasthttp.RequestCtx, e *codec.Error) {
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	ctx.SetBody(openai.AppendError(nil, e))
}

// chat answers a chat completion.
func (d *demoUpstream) chat(ctx *fasthttp.RequestCtx) {
	var req codec.Request
	if e := openai.DecodeRequest(ctx.PostBody(), &req); e != nil {
		demoError(ctx, e)
		return
	}
	// The demo model counts its prompt as the gateway estimates prompts,
	// so that every count a client sees of one prompt agrees.
	prompt, last := codec.EstimateTokens(&req), ""
	for _, m := range req.Messages {
		if m.Role == codec.RoleUser {
			var text []string
			for _, p := range m.Parts {
				text = append(text, p.Text)
			}
			last = strings.Join(text, " ")
		}
	}
	words := demoReply(last)
	c := openai.Completion{ID: "chatcmpl-demo", Created: time.Now().Unix(), Model: req.Model}
	usage := codec.Usage{Input: prompt, Output: len(words)}
	if !req.Stream {
		demoJSON(ctx, c.AppendResponse(nil, strings.Join(words, ""), "stop", usage))
		return
	}
	d.stream(ctx, words, c.AppendChunk(nil, true, "", ""),
		func(dst []byte, word, finish string) []byte { return c.AppendChunk(dst, false, word, finish) },
		c.AppendUsageChunk(nil, usage))
}

// complete answers a legacy text completion with the chat reply to its
// prompt.
func (d *demoUpstream) complete(ctx *fasthttp.RequestCtx) {
	var req struct {
		Model  string `json:"model"`
		Prompt any    `json:"prompt"`
		Stream bool   `json:"stream"`
	}
	if sonic.Unmarshal(ctx.PostBody(), &req) != nil || req.Prompt == nil {
		demoError(ctx, &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Message: "demo: want a model and a prompt"})
		return
	}
	prompt := fmt.Sprint(req.Prompt)
	words := demoReply(prompt)
	c := openai.Completion{ID: "cmpl-demo", Created: time.Now().Unix(), Model: req.Model}
	usage := codec.Usage{Input: codec.EstimateText(len(prompt)), Output: len(words)}
	if !req.Stream {
		demoJSON(ctx, c.AppendText(nil, strings.Join(words, ""), "stop", usage))
		return
	}
	d.stream(ctx, words, nil, c.AppendTextChunk, c.AppendTextUsageChunk(nil, usage))
}

// stream sends a reply as SSE events at the demo's pace: first (when
// set), a chunk per word, the finishing chunk, the usage chunk when the
// request asked for it, and [DONE].
func (d *demoUpstream) stream(ctx *fasthttp.RequestCtx, words []string, first []byte,
	chunk func(dst []byte, text, finish string) []byte, usage []byte) {
	if !bytes.Contains(ctx.PostBody(), []byte(`"include_usage":true`)) {
		usage = nil
	}
	d.paced(ctx, "text/event-stream", func(send func(part []byte, wait bool) bool) {
		var b, c []byte
		event := func(data []byte, wait bool) bool {
			b = sse.AppendEvent(b[:0], "", data)
			return send(b, wait)
		}
		if first != nil && !event(first, false) {
			return
		}
		for _, word := range words {
			if !event(chunk(c[:0], word, ""), true) {
				return
			}
		}
		event(chunk(c[:0], "", "stop"), false)
		if usage != nil {
			event(usage, false)
		}
		event([]byte("[DONE]"), false)
	})
}

// paced answers with a body that write sends part by part, each flushed
// to the client as it is written, a part sent with wait after the demo's
// pace. send reports false once the client is gone.
func (d *demoUpstream) paced(ctx *fasthttp.RequestCtx, contentType string, write func(send func(part []byte, wait bool) bool)) {
	ctx.SetContentType(contentType)
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		write(func(part []byte, wait bool) bool {
			if wait {
				time.Sleep(d.pace)
			}
			w.Write(part) //nolint:errcheck // Flush reports the error
			return w.Flush() == nil
		})
	})
}

// demoEmbed answers an embeddings request: for each input a unit vector
// drawn from a hash of it, so that one text always gets one vector.
func demoEmbed(ctx *fasthttp.RequestCtx) {
	var req codec.Request
	if e := openai.DecodeEmbeddingsRequest(ctx.PostBody(), &req); e != nil {
		demoError(ctx, e)
		return
	}
	dims := cmp.Or(req.Embed.Dimensions, demoDimensions)
	if dims > maxDemoDimensions {
		demoError(ctx, &codec.Error{Status: 400, Kind: codec.KindInvalidRequest,
			Message: fmt.Sprintf("demo: at most %d dimensions", maxDemoDimensions)})
		return
	}
	var vectors [][]float32
	for _, t := range req.Embed.Texts {
		vectors = append(vectors, demoVector(t, dims))
	}
	for _, ids := range req.Embed.Tokens {
		vectors = append(vectors, demoVector(fmt.Sprint(ids), dims))
	}
	usage := codec.Usage{Input: codec.EstimateTokens(&req)}
	demoJSON(ctx, openai.AppendEmbeddings(nil, req.Model, vectors, req.Embed.Base64, usage))
}

const demoDimensions, maxDemoDimensions = 16, 4096

// demoRerank answers a rerank: each document scored by the share of the
// query's words it holds (an object by its text, or its JSON when it has
// none), most relevant first and in their order among equals, top_n kept,
// the documents returned when asked.
func demoRerank(ctx *fasthttp.RequestCtx) {
	var req codec.Request
	if e := openai.DecodeRerankRequest(ctx.PostBody(), &req); e != nil {
		demoError(ctx, e)
		return
	}
	rr := req.Rerank
	query, size := demoWords(rr.Query), len(rr.Query)
	ranked := make([]codec.Ranked, len(rr.Documents))
	for i, d := range rr.Documents {
		text := cmp.Or(d.Text, d.Object)
		ranked[i] = codec.Ranked{Index: i, Score: demoOverlap(query, demoWords(text))}
		size += len(text)
	}
	slices.SortStableFunc(ranked, func(a, b codec.Ranked) int { return cmp.Compare(b.Score, a.Score) })
	if rr.TopN > 0 && rr.TopN < len(ranked) {
		ranked = ranked[:rr.TopN]
	}
	resp := codec.Response{Ranking: &codec.Ranking{Results: ranked}, Usage: codec.Usage{Input: codec.EstimateText(size)}}
	demoJSON(ctx, openai.AppendRerankResponse(nil, &resp, codec.StreamInfo{ID: "rerank-demo", Model: req.Model, Request: &req}))
}

// demoWords is the set of a text's words, lower-cased.
func demoWords(s string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words[w] = true
	}
	return words
}

// demoOverlap is the share of the query's words that the document has.
func demoOverlap(query, doc map[string]bool) float64 {
	n := 0
	for w := range query {
		if doc[w] {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(n) / float64(len(query))
}

func demoVector(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text)) //nolint:errcheck // never fails
	r := rand.New(rand.NewPCG(h.Sum64(), 0))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := r.NormFloat64()
		v[i], norm = float32(x), norm+x*x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(norm))
	}
	return v
}

func demoJSON(ctx *fasthttp.RequestCtx, body []byte) {
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// demoReply is the demo model's answer to a user message, as words that keep
// their trailing space.
func demoReply(user string) []string {
	said := strings.Fields(user)
	if len(said) > 24 {
		said = append(said[:24], "…")
	}
	text := "Hello from the Rosetta demo model. You said: \"" + strings.Join(said, " ") +
		"\". Add a real channel to rosetta.yaml to talk to a real model."
	words := strings.SplitAfter(text, " ")
	return words
}

// quietLogger drops the demo server's messages: a client that goes away
// mid-stream is normal there, and the gateway logs the request itself.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
