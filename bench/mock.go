package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// mock is an upstream that answers POST /v1/chat/completions and
// /v1/embeddings the way OpenAI does, as cheaply as its server lets it:
// replies are rendered once per model name and replayed. Streams are
// written event by event with a flush after each, as a real provider sends
// them. Two servers can speak for it, with the same answers (mockServers):
// fasthttp, the default, and net/http (mock_nethttp.go), the server issue
// 11's own measurement used.
type mock struct {
	ln     net.Listener
	srv    *fasthttp.Server // fasthttp's; nil for net/http's
	http   *http.Server     // net/http's; nil for fasthttp's
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

// mockServers are the servers the mock can run on (-mock).
var mockServers = []string{"fasthttp", "nethttp"}

// mockAbout says what the mock is, for the reports.
func mockAbout(server string) string {
	if server == "nethttp" {
		return "nethttp (-mock nethttp: net/http's server, each SSE event flushed by http.Flusher, as issue 11's mock)"
	}
	return "fasthttp (-mock fasthttp, the default: fasthttp's server, each SSE event flushed to its body stream)"
}

// mockReply holds one model's rendered answers.
type mockReply struct {
	embedding []byte   // the embeddings of one text, as floats (testutil.EmbeddingAnswer)
	full      []byte   // the non-streamed chat.completion
	events    [][]byte // the stream without stream_options.include_usage
	eventsUse [][]byte // the stream with it: "usage":null chunks and the usage chunk
}

// mockAnswer is the mock's answer to one request, whichever server writes
// it: a 200 with OpenAI's headers (mockHeaders) and a whole body or a
// stream of events, or a 4xx with an OpenAI error body and only the
// server's name (mockServerName) beside the date, type and length.
type mockAnswer struct {
	status int
	body   []byte   // a whole answer or the error; nil for a stream
	events [][]byte // a stream's events; nil for a whole answer
}

var (
	mockKeyStream = []byte(`"stream"`)
	mockKeyUsage  = []byte(`"include_usage"`)
	mockKeyModel  = []byte(`"model"`)
	mockTrue      = []byte("true")
)

// The mock's content types, its streams' Cache-Control, and the Server
// header of its rejections (fasthttp's Name).
const (
	mockJSON       = "application/json"
	mockSSE        = "text/event-stream; charset=utf-8"
	mockNoCache    = "no-cache"
	mockServerName = "mock"
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

// startMock starts a mock upstream on a loopback port, on server
// (mockServers). Every stream carries events content chunks, each after
// delay. auth, when not empty, is the upstream key the mock insists on.
func startMock(server string, events int, delay time.Duration, auth string) (*mock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &mock{ln: ln, addr: ln.Addr().String(), events: events, delay: delay,
		replies: map[string]*mockReply{}}
	if auth != "" {
		m.auth = []byte("Bearer " + auth)
	}
	switch server {
	case "fasthttp":
		m.serveFast()
	case "nethttp":
		m.serveNetHTTP()
	default:
		ln.Close()
		return nil, fmt.Errorf("unknown mock server %q (want %s)", server, strings.Join(mockServers, " or "))
	}
	return m, nil
}

// serveFast serves the mock on fasthttp.
func (m *mock) serveFast() {
	m.srv = &fasthttp.Server{
		Handler:               m.handle,
		Name:                  mockServerName,
		NoDefaultServerHeader: true, // mockHeaders has one
		NoDefaultContentType:  true,
		ReadTimeout:           time.Minute,
		IdleTimeout:           time.Minute,
		CloseOnShutdown:       true,
	}
	go m.srv.Serve(m.ln) //nolint:errcheck // ends with Shutdown
}

func (m *mock) close() {
	if m.http != nil {
		m.http.Close() //nolint:errcheck
		return
	}
	m.srv.Shutdown() //nolint:errcheck
}

// answer decides the answer to a request: its method, path, whether its
// Authorization header is the expected one, and its body.
func (m *mock) answer(post bool, path string, authOK bool, body []byte) mockAnswer {
	embeddings := path == "/v1/embeddings"
	if !post || path != "/v1/chat/completions" && !embeddings {
		return m.reject(404, "invalid_request_error", "Unknown request URL.")
	}
	if !authOK {
		return m.reject(401, "invalid_request_error", "Incorrect API key provided.")
	}
	model := modelOf(body)
	if len(model) == 0 {
		return m.reject(400, "invalid_request_error", "you must provide a model parameter")
	}
	r := m.reply(model)
	m.requests.Add(1)
	switch {
	case embeddings:
		return mockAnswer{status: 200, body: r.embedding}
	case !isTrue(body, mockKeyStream):
		return mockAnswer{status: 200, body: r.full}
	}
	m.streams.Add(1)
	if isTrue(body, mockKeyUsage) {
		m.withUse.Add(1)
		return mockAnswer{status: 200, events: r.eventsUse}
	}
	return mockAnswer{status: 200, events: r.events}
}

func (m *mock) reject(status int, kind, msg string) mockAnswer {
	m.rejected.Add(1)
	return mockAnswer{status: status,
		body: fmt.Appendf(nil, `{"error":{"message":%q,"type":%q,"param":null,"code":null}}`, msg, kind)}
}

// authOK says whether an Authorization header is the one the mock expects.
func (m *mock) authOK(got []byte) bool { return m.auth == nil || bytes.Equal(got, m.auth) }

// handle is the fasthttp server's handler.
func (m *mock) handle(ctx *fasthttp.RequestCtx) {
	a := m.answer(ctx.IsPost(), string(ctx.Path()), m.authOK(ctx.Request.Header.Peek("Authorization")), ctx.PostBody())
	if a.status != 200 {
		ctx.SetStatusCode(a.status)
		ctx.SetContentType(mockJSON)
		ctx.SetBody(a.body)
		return
	}
	for _, h := range mockHeaders {
		ctx.Response.Header.Set(h[0], h[1])
	}
	if a.events == nil {
		ctx.SetContentType(mockJSON)
		ctx.SetBody(a.body)
		return
	}
	ctx.SetContentType(mockSSE)
	ctx.Response.Header.Set("Cache-Control", mockNoCache)
	delay := m.delay
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		for _, ev := range a.events {
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
