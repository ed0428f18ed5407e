package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// mock is an upstream that answers POST /v1/chat/completions and
// /v1/embeddings the way OpenAI does, as cheaply as it can: replies are
// rendered once per model name and replayed. Streams are written event by event with a flush after each, as a
// real provider sends them.
type mock struct {
	ln     net.Listener
	srv    *fasthttp.Server
	addr   string
	auth   []byte // the expected Authorization header; nil accepts any
	events int
	delay  time.Duration

	mu      sync.RWMutex
	replies map[string]*mockReply // by requested model

	requests atomic.Int64 // chat requests answered 200
	streams  atomic.Int64 // of which streamed
	withUse  atomic.Int64 // of which asked for stream usage
	rejected atomic.Int64 // answered 4xx
}

// mockReply holds one model's rendered answers.
type mockReply struct {
	embedding []byte   // the embeddings of one text, as floats (testutil.EmbeddingAnswer)
	full      []byte   // the non-streamed chat.completion
	events    [][]byte // the stream without stream_options.include_usage
	eventsUse [][]byte // the stream with it: "usage":null chunks and the usage chunk
}

var (
	mockKeyStream = []byte(`"stream"`)
	mockKeyUsage  = []byte(`"include_usage"`)
	mockKeyModel  = []byte(`"model"`)
	mockTrue      = []byte("true")
)

// mockHeaders are the headers OpenAI sends with every chat completion (Date
// and Content-Type aside), with typical values.
var mockHeaders = [][2]string{
	{"Access-Control-Expose-Headers", "X-Request-ID"},
	{"Openai-Organization", "user-bench0000000000000000"},
	{"Openai-Processing-Ms", "412"},
	{"Openai-Project", "proj_bench000000000000000000"},
	{"Openai-Version", "2020-10-01"},
	{"X-Envoy-Upstream-Service-Time", "415"},
	{"X-Ratelimit-Limit-Requests", "30000"},
	{"X-Ratelimit-Limit-Tokens", "150000000"},
	{"X-Ratelimit-Remaining-Requests", "29999"},
	{"X-Ratelimit-Remaining-Tokens", "149999513"},
	{"X-Ratelimit-Reset-Requests", "2ms"},
	{"X-Ratelimit-Reset-Tokens", "0s"},
	{"X-Request-Id", "req_3f9a2c1e8b7d4a6f9e0c2b1a8d7f6e5c"},
	{"Strict-Transport-Security", "max-age=31536000; includeSubDomains; preload"},
	{"X-Content-Type-Options", "nosniff"},
	{"Cf-Cache-Status", "DYNAMIC"},
	{"Server", "cloudflare"},
	{"Cf-Ray", "8f3a2b1c4d5e6f70-FRA"},
	{"Alt-Svc", `h3=":443"; ma=86400`},
}

// startMock starts a mock upstream on a loopback port. Every stream carries
// events content chunks, each after delay. auth, when not empty, is the
// upstream key the mock insists on.
func startMock(events int, delay time.Duration, auth string) (*mock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &mock{ln: ln, addr: ln.Addr().String(), events: events, delay: delay,
		replies: map[string]*mockReply{}}
	if auth != "" {
		m.auth = []byte("Bearer " + auth)
	}
	m.srv = &fasthttp.Server{
		Handler:               m.handle,
		Name:                  "mock",
		NoDefaultServerHeader: true, // mockHeaders has one
		NoDefaultContentType:  true,
		ReadTimeout:           time.Minute,
		IdleTimeout:           time.Minute,
		CloseOnShutdown:       true,
	}
	go m.srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	return m, nil
}

func (m *mock) close() { m.srv.Shutdown() } //nolint:errcheck

func (m *mock) handle(ctx *fasthttp.RequestCtx) {
	embeddings := string(ctx.Path()) == "/v1/embeddings"
	if !ctx.IsPost() || string(ctx.Path()) != "/v1/chat/completions" && !embeddings {
		m.reject(ctx, 404, "invalid_request_error", "Unknown request URL.")
		return
	}
	if m.auth != nil && !bytes.Equal(ctx.Request.Header.Peek("Authorization"), m.auth) {
		m.reject(ctx, 401, "invalid_request_error", "Incorrect API key provided.")
		return
	}
	body := ctx.PostBody()
	model := modelOf(body)
	if len(model) == 0 {
		m.reject(ctx, 400, "invalid_request_error", "you must provide a model parameter")
		return
	}
	r := m.reply(model)
	m.requests.Add(1)
	for _, h := range mockHeaders {
		ctx.Response.Header.Set(h[0], h[1])
	}
	if embeddings {
		ctx.SetContentType("application/json")
		ctx.SetBody(r.embedding)
		return
	}
	if !isTrue(body, mockKeyStream) {
		ctx.SetContentType("application/json")
		ctx.SetBody(r.full)
		return
	}
	m.streams.Add(1)
	events := r.events
	if isTrue(body, mockKeyUsage) {
		events = r.eventsUse
		m.withUse.Add(1)
	}
	ctx.SetContentType("text/event-stream; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	delay := m.delay
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		for _, ev := range events {
			if delay > 0 {
				time.Sleep(delay)
			}
			if _, err := w.Write(ev); err != nil {
				return
			}
			if err := w.Flush(); err != nil {
				return
			}
		}
	})
}

func (m *mock) reject(ctx *fasthttp.RequestCtx, status int, kind, msg string) {
	m.rejected.Add(1)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	fmt.Fprintf(ctx, `{"error":{"message":%q,"type":%q,"param":null,"code":null}}`, msg, kind)
}

// isTrue reports whether the first occurrence of the quoted key in body
// has the value true: a scan, not a decode.
func isTrue(body, key []byte) bool {
	i := bytes.Index(body, key)
	if i < 0 {
		return false
	}
	b := bytes.TrimLeft(body[i+len(key):], " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return false
	}
	return bytes.HasPrefix(bytes.TrimLeft(b[1:], " \t\r\n"), mockTrue)
}

// modelOf returns the value of the first "model" key of a request body, or
// nil: a scan, not a decode, as the bench's requests have no escapes in it.
func modelOf(body []byte) []byte {
	i := bytes.Index(body, mockKeyModel)
	if i < 0 {
		return nil
	}
	b := bytes.TrimLeft(body[i+len(mockKeyModel):], " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return nil
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	if len(b) == 0 || b[0] != '"' {
		return nil
	}
	n := bytes.IndexByte(b[1:], '"')
	if n < 0 {
		return nil
	}
	return b[1 : 1+n]
}

// reply returns the rendered answers for a model, rendering them once.
func (m *mock) reply(model []byte) *mockReply {
	m.mu.RLock()
	r := m.replies[string(model)]
	m.mu.RUnlock()
	if r != nil {
		return r
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r = m.replies[string(model)]; r == nil {
		r = renderReply(string(model), m.events)
		m.replies[string(model)] = r
	}
	return r
}

const (
	mockID          = "chatcmpl-BZk3Yq8XbQ2nR7vTmL4sWcHdE9fGa"
	mockCreated     = 1763800000
	mockFingerprint = "fp_560af6e559"
	mockPromptToks  = 231
)

// mockWords are the content deltas, cycled.
var mockWords = []string{
	"Sure", "!", " Here", " is", " a", " short", " summary", " of", " the", " main",
	" points", ":", " the", " gateway", " relays", " each", " event", " as", " it", " arrives",
}

// obfuscationChars are those of api.openai.com's obfuscation strings.
const obfuscationChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// obfuscation is the member api.openai.com ends every chunk with (unless
// stream_options.include_obfuscation is false): a random string of 2 to 14
// characters, so that a chunk's length does not tell its text's. It varies
// from chunk to chunk, which a stream's check must cope with (rawjson.Shape).
func obfuscation(rnd *rand.Rand) string {
	b := make([]byte, 2+rnd.IntN(13))
	for i := range b {
		b[i] = obfuscationChars[rnd.IntN(len(obfuscationChars))]
	}
	return `,"obfuscation":"` + string(b) + `"`
}

// renderReply renders a model's chat.completion and its two streams
// (role chunk, events content chunks, finish chunk, [usage chunk], [DONE]),
// each chunk as api.openai.com writes it: "usage":null when include_usage
// is set, and an obfuscation string last. The strings come from a fixed
// seed, so every run replays the same bytes.
func renderReply(model string, events int) *mockReply {
	rnd := rand.New(rand.NewPCG(1, 2))
	usage := func(completion int) string {
		return `{"prompt_tokens":` + strconv.Itoa(mockPromptToks) +
			`,"completion_tokens":` + strconv.Itoa(completion) +
			`,"total_tokens":` + strconv.Itoa(mockPromptToks+completion) +
			`,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}` +
			`,"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`
	}
	head := `{"id":"` + mockID + `","object":"chat.completion.chunk","created":` + strconv.Itoa(mockCreated) +
		`,"model":"` + model + `","service_tier":"default","system_fingerprint":"` + mockFingerprint + `","choices":`
	chunk := func(delta, finish string, withUse bool) []byte {
		s := "data: " + head + `[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]`
		if withUse {
			s += `,"usage":null`
		}
		return []byte(s + obfuscation(rnd) + "}\n\n")
	}
	r := &mockReply{embedding: testutil.EmbeddingAnswer(model, false)}
	for _, withUse := range []bool{false, true} {
		evs := [][]byte{chunk(`{"role":"assistant","content":"","refusal":null}`, "null", withUse)}
		for i := range events {
			evs = append(evs, chunk(`{"content":"`+mockWords[i%len(mockWords)]+`"}`, "null", withUse))
		}
		evs = append(evs, chunk(`{}`, `"stop"`, withUse))
		if withUse {
			evs = append(evs, []byte("data: "+head+`[],"usage":`+usage(events)+obfuscation(rnd)+"}\n\n"))
		}
		evs = append(evs, []byte("data: [DONE]\n\n"))
		if withUse {
			r.eventsUse = evs
		} else {
			r.events = evs
		}
	}
	r.full = []byte(`{"id":"` + mockID + `","object":"chat.completion","created":` + strconv.Itoa(mockCreated) +
		`,"model":"` + model + `","choices":[{"index":0,"message":{"role":"assistant",` +
		`"content":"Sure! Here is a short summary of the main points: the gateway relays each event as it arrives, ` +
		`keeps the request bytes as they are and only puts the model name back.","refusal":null,"annotations":[]},` +
		`"logprobs":null,"finish_reason":"stop"}],"usage":` + usage(34) +
		`,"service_tier":"default","system_fingerprint":"` + mockFingerprint + `"}`)
	return r
}
