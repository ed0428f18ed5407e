package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/internal/proctime"
)

// target is where a run sends its requests and what it sends.
type target struct {
	name   string // "direct" or "gateway"
	addr   string // host:port
	auth   string // the bearer secret
	body   []byte // the chat request
	stream bool
	// anthropic: the client speaks Anthropic's Messages API (the gateway
	// translates to the OpenAI mock) instead of Chat Completions.
	anthropic bool
	// embeddings: the client asks for the embeddings of one text
	// (embeddingsBody) instead of a chat completion.
	embeddings bool
}

// path is the endpoint t's client posts to.
func (t target) path() string {
	switch {
	case t.embeddings:
		return "/v1/embeddings"
	case t.anthropic:
		return "/v1/messages"
	}
	return "/v1/chat/completions"
}

// embeddingsBody is an embeddings request of one text (a sentence of the
// conversation's system prompt) for model, for floats.
func embeddingsBody(model string) []byte {
	return []byte(`{"model":"` + model + `","input":"You are a concise assistant for the operations team of a small online shop.",` +
		`"encoding_format":"float"}`)
}

// end is how a complete stream of t's client style ends.
func (t target) end() []byte {
	if t.anthropic {
		return messagesEnd
	}
	return streamEnd
}

// runSpec is how hard and how long a run loads its target.
type runSpec struct {
	conns  int
	warmup time.Duration // requests completed before the window are not measured
	dur    time.Duration // the measured window
	// rate, when positive, makes the run open-loop: this many requests per
	// second in all, spread evenly over the connections, instead of each
	// connection sending back to back.
	rate float64

	// sample, in split placement, reads the other processes' CPU time and
	// the cores' at the start and the end of the window.
	sample func() splitSample
}

// result is one run's measurements.
type result struct {
	target string
	conns  int
	window time.Duration
	cores  int // the cores the process could use (GOMAXPROCS, at most the CPUs)

	requests int             // completed in the window, 200 and well formed
	lat      []time.Duration // their latencies, sorted
	ttfb     []time.Duration // streams: time to the first body byte, sorted
	cpu      time.Duration   // CPU time the whole process used in the window
	waited   time.Duration   // time its threads were runnable but had no core
	reads    int64           // read system calls of the process in the window
	writes   int64           // write system calls of the process in the window

	// Failures over the whole run, warm-up included.
	errors     int // transport errors and malformed or truncated responses
	non200     int
	firstError string

	// sample is the body of one 200 response, for checks.
	sample []byte

	// split is, in split placement, what the mock, the gateway, nginx and
	// the two cores used in the window; nil in shared placement.
	split *splitSample

	// wrk is wrk's own figures when it generated the load (-load wrk): its
	// req/s and latency percentiles; lat and ttfb are then empty, and the
	// run-queue wait of the load generator is not measured.
	wrk *wrkFigures
}

func (r *result) reqPerSec() float64 {
	if r.wrk != nil {
		return r.wrk.rps
	}
	return float64(r.requests) / r.window.Seconds()
}

// pct is the q-quantile of the run's latencies: from wrk's distribution
// (50%, 99% and max only; -1 for the others) when wrk generated the load.
func (r *result) pct(q float64) time.Duration {
	if r.wrk == nil {
		return percentile(r.lat, q)
	}
	switch q {
	case 0.5:
		return r.wrk.p50
	case 0.99:
		return r.wrk.p99
	case 1:
		return r.wrk.max
	}
	return -1
}
func (r *result) failed() bool { return r.errors > 0 || r.non200 > 0 }

// waitShare is the run-queue wait in the window per available core: 0 on
// a quiet machine, near or above 1 when other processes hold the cores.
func (r *result) waitShare() float64 {
	return r.waited.Seconds() / (r.window.Seconds() * float64(r.cores))
}

// callsPerReq is the process's read and write system calls per request.
func (r *result) callsPerReq() (reads, writes float64) {
	if r.requests == 0 {
		return 0, 0
	}
	n := float64(r.requests)
	return float64(r.reads) / n, float64(r.writes) / n
}

// cpuPerReq is the process's CPU time per measured request: client, mock
// and (in gateway runs) gateway together.
func (r *result) cpuPerReq() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests)
}

// cpuUse is the share of the available cores (GOMAXPROCS) the process used
// in the window. Well below 1 means the process waited: for other
// processes on a shared machine, or on a stall.
func (r *result) cpuUse() float64 {
	return r.cpu.Seconds() / (r.window.Seconds() * float64(r.cores))
}

// streamEnd is how every complete OpenAI stream ends, messagesEnd every
// Anthropic one.
var (
	streamEnd   = []byte("data: [DONE]\n\n")
	messagesEnd = []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
)

// worker is one client with its own keep-alive connection. It touches no
// shared state while the run goes on.
type worker struct {
	hc   *fasthttp.HostClient
	req  *fasthttp.Request
	resp *fasthttp.Response
	buf  []byte
	tail []byte // the end of the stream being read
	end  []byte // how a complete stream ends (target.end)

	lat, ttfb  []time.Duration
	errors     int
	non200     int
	firstError string
	sample     []byte
}

// load runs spec.conns workers against t: each sends requests back to back
// for spec.warmup+spec.dur; requests completed within the last spec.dur are
// measured.
func load(t target, spec runSpec) *result {
	// Room for 100k req/s without growing on the hot path; a faster run
	// only grows the slices, amortized.
	perWorker := max(1024, int(spec.dur.Seconds()*100_000)/spec.conns)
	ws := make([]*worker, spec.conns)
	for i := range ws {
		ws[i] = newWorker(t, perWorker)
	}

	var wg sync.WaitGroup
	start := make(chan struct{})
	var from, end time.Time
	var every time.Duration // each connection's time between requests, open-loop
	if spec.rate > 0 {
		every = time.Duration(float64(spec.conns) / spec.rate * float64(time.Second))
	}
	begin := time.Now()
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Staggered, so that the connections' requests interleave.
			first := begin.Add(every * time.Duration(i) / time.Duration(len(ws)))
			w.loop(t.stream, from, end, i == 0, first, every)
		}()
	}
	from = begin.Add(spec.warmup)
	end = from.Add(spec.dur)
	close(start) // happens before the workers read from and end
	var cpu, waited time.Duration
	var reads, writes int64
	var split *splitSample
	cpuDone := make(chan struct{})
	go func() { // the process's CPU time, run-queue wait and I/O calls over the window
		time.Sleep(time.Until(from))
		var s0 splitSample
		if spec.sample != nil {
			s0 = spec.sample()
		}
		c0, w0 := proctime.CPU(), runQueueWait()
		r0, x0 := ioCalls()
		time.Sleep(time.Until(end))
		cpu, waited = proctime.CPU()-c0, runQueueWait()-w0
		r1, x1 := ioCalls()
		reads, writes = r1-r0, x1-x0
		if spec.sample != nil {
			d := spec.sample().sub(s0)
			split = &d
		}
		close(cpuDone)
	}()
	wg.Wait()
	<-cpuDone

	r := &result{target: t.name, conns: spec.conns, window: spec.dur, cpu: cpu, waited: waited,
		reads: reads, writes: writes, split: split, cores: max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU()))}
	lats := make([][]time.Duration, len(ws))
	ttfbs := make([][]time.Duration, len(ws))
	for i, w := range ws {
		lats[i], ttfbs[i] = w.lat, w.ttfb
		r.requests += len(w.lat)
		r.errors += w.errors
		r.non200 += w.non200
		if r.firstError == "" {
			r.firstError = w.firstError
		}
		if r.sample == nil {
			r.sample = w.sample
		}
		w.release()
	}
	r.lat = merge(lats)
	if t.stream {
		r.ttfb = merge(ttfbs)
	}
	return r
}

// newWorker makes a worker for t with room for samples latencies.
func newWorker(t target, samples int) *worker {
	w := &worker{
		hc: &fasthttp.HostClient{
			Addr:                     t.addr,
			MaxConns:                 1, // one keep-alive connection per worker
			ReadTimeout:              30 * time.Second,
			WriteTimeout:             30 * time.Second,
			MaxIdleConnDuration:      time.Minute,
			NoDefaultUserAgentHeader: true,
			StreamResponseBody:       t.stream,
		},
		req:  fasthttp.AcquireRequest(),
		resp: fasthttp.AcquireResponse(),
		buf:  make([]byte, 16<<10),
		tail: make([]byte, 0, 2*len(t.end())),
		end:  t.end(),
		lat:  make([]time.Duration, 0, samples),
	}
	if t.stream {
		w.ttfb = make([]time.Duration, 0, samples)
	}
	w.req.Header.SetMethod(fasthttp.MethodPost)
	w.req.SetRequestURI("http://" + t.addr + t.path())
	if t.anthropic {
		w.req.Header.Set("anthropic-version", "2023-06-01")
	}
	w.req.Header.SetContentType("application/json")
	w.req.Header.Set("Authorization", "Bearer "+t.auth)
	w.req.Header.SetUserAgent("rosetta-bench/1")
	if t.stream {
		w.req.Header.Set("Accept", "text/event-stream")
	}
	w.req.SetBody(t.body)
	return w
}

func (w *worker) release() {
	w.hc.CloseIdleConnections()
	fasthttp.ReleaseRequest(w.req)
	fasthttp.ReleaseResponse(w.resp)
}

// probe sends one request to t and returns its status, headers and body
// (any status), or the error of a failed or malformed exchange.
func probe(t target) (status int, header http.Header, body []byte, err error) {
	w := newWorker(t, 0)
	defer w.release()
	_, err = w.do(t.stream, time.Now(), true)
	if err != nil {
		return 0, nil, nil, err
	}
	header = http.Header{}
	for k, v := range w.resp.Header.All() {
		header.Add(string(k), string(v))
	}
	if status = w.resp.StatusCode(); status != fasthttp.StatusOK {
		return status, header, bytes.Clone(w.resp.Body()), nil
	}
	return status, header, w.sample, nil
}

// loop sends requests until end. A request is measured when it completes
// within [from, end]. With every > 0 the requests are paced: one is sent at
// first and then every interval (at once, when the last one took longer),
// and measured from when it was sent.
func (w *worker) loop(stream bool, from, end time.Time, keepSample bool, first time.Time, every time.Duration) {
	next := first
	for {
		if every > 0 {
			time.Sleep(time.Until(next))
			next = next.Add(every)
			if now := time.Now(); next.Before(now) {
				next = now // behind: no burst to catch up
			}
		}
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		ttfb, err := w.do(stream, t0, keepSample && w.sample == nil)
		t1 := time.Now()
		status := w.resp.StatusCode()
		switch {
		case err != nil:
			w.errors++
			if w.firstError == "" {
				w.firstError = err.Error()
			}
			time.Sleep(time.Millisecond) // do not spin on a dead target
		case status != fasthttp.StatusOK:
			w.non200++
			if w.firstError == "" {
				w.firstError = fmt.Sprintf("status %d: %.300s", status, w.resp.Body())
			}
		case t1.After(from) && !t1.After(end):
			w.lat = append(w.lat, t1.Sub(t0))
			if stream {
				w.ttfb = append(w.ttfb, ttfb)
			}
		}
	}
}

var (
	errEmptyBody   = errors.New("empty response body")
	errTruncated   = errors.New("stream did not end with data: [DONE]")
	errNotJSONBody = errors.New("response body is not a JSON object")
)

// do sends one request and reads the whole response. For a stream it returns
// the time from t0 to the first body byte. With sample, the body is kept.
// A non-200 response is no error here: the caller counts it.
func (w *worker) do(stream bool, t0 time.Time, sample bool) (ttfb time.Duration, err error) {
	if err = w.hc.Do(w.req, w.resp); err != nil {
		return 0, err
	}
	if w.resp.StatusCode() != fasthttp.StatusOK {
		w.resp.Body() // reads (and closes) a streamed body for the caller's report
		return 0, nil
	}
	if !stream {
		b := w.resp.Body()
		switch {
		case len(b) == 0:
			return 0, errEmptyBody
		case b[0] != '{' || b[len(b)-1] != '}':
			return 0, errNotJSONBody
		}
		if sample {
			w.sample = bytes.Clone(b)
		}
		return 0, nil
	}
	r := w.resp.BodyStream()
	w.tail = w.tail[:0]
	first := true
	for {
		m, rerr := r.Read(w.buf)
		if m > 0 {
			if first {
				ttfb, first = time.Since(t0), false
			}
			if sample {
				w.sample = append(w.sample, w.buf[:m]...)
			}
			// Keep the last len(w.end) bytes of the body.
			if m >= len(w.end) {
				w.tail = append(w.tail[:0], w.buf[m-len(w.end):m]...)
			} else {
				w.tail = append(w.tail, w.buf[:m]...)
				if cut := len(w.tail) - len(w.end); cut > 0 {
					w.tail = w.tail[:copy(w.tail, w.tail[cut:])]
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			w.resp.CloseBodyStream() //nolint:errcheck
			return ttfb, rerr
		}
	}
	if err = w.resp.CloseBodyStream(); err != nil {
		return ttfb, err
	}
	if !bytes.Equal(w.tail, w.end) {
		return ttfb, errTruncated
	}
	return ttfb, nil
}

// conversation is the chat history a request carries: a system prompt and
// the turns, as a JSON array's elements in Chat Completions form (Anthropic's
// Messages API takes the same turns).
type conversation struct {
	name, system, turns string
	nturns              int
}

var (
	// shortConv is the bench's first request body (about 1 KB): a system
	// prompt and three turns. -body short; the default of shared placement.
	shortConv = conversation{"short", benchSystem, benchTurns, 3}
	// longConv is a chat client's request some way into a conversation
	// (about 3 KB): a longer system prompt and seven turns. -body long; the
	// default of split placement.
	longConv = conversation{"long", benchSystemLong, benchTurnsLong, 7}
)

// chatBody is the short conversation as a chat completion request.
func chatBody(model string, stream, includeUsage bool) []byte {
	return chatBodyOf(shortConv, model, stream, includeUsage)
}

// chatBodyOf is a chat completion request of conversation c with the usual
// settings. With includeUsage it asks for stream_options.include_usage,
// where the gateway would put it.
func chatBodyOf(c conversation, model string, stream, includeUsage bool) []byte {
	var b []byte
	b = append(b, '{')
	if includeUsage {
		b = append(b, `"stream_options":{"include_usage":true},`...)
	}
	b = append(b, `"model":"`...)
	b = append(b, model...)
	b = append(b, `","messages":[{"role":"system","content":"`+c.system+`"},`+c.turns+`],`+
		`"temperature":0.7,"top_p":1,"max_tokens":512,"presence_penalty":0,"frequency_penalty":0,"user":"ops-dashboard-7"`...)
	if stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}')
}

// The conversations of the bench's requests, in either style.
const (
	benchSystem = `You are a concise assistant for the operations team of a small online shop. ` +
		`Answer in plain English, use short paragraphs, and say so when you are not sure. Never invent order numbers.`
	benchTurns = `{"role":"user","content":"Our checkout page got slow yesterday evening between 18:00 and 19:30. ` +
		`The database CPU was at 40%, the app servers at 70%, and the payment provider reported no incident. ` +
		`What should we look at first?"},` +
		`{"role":"assistant","content":"Start with the request latency by endpoint for that window and compare it with the day before. ` +
		`If only checkout is slow, look at its external calls (payment, tax, shipping quotes) and at lock waits on the orders table."},` +
		`{"role":"user","content":"Only checkout was slow, and the shipping quote calls took 2-3 seconds instead of 200 ms. ` +
		`Can you summarize the main points for the incident report in a few sentences?"}`

	benchSystemLong = benchSystem + ` The team runs the shop on three app servers behind a load balancer, ` +
		`one PostgreSQL primary with a replica, and a queue for e-mails and shipping labels. ` +
		`When you suggest a command or a query, say what it does and whether it is safe to run in production. ` +
		`When the user pastes logs, quote only the lines that matter. Keep answers under 200 words unless asked for more.`
	benchTurnsLong = benchTurns + `,` +
		`{"role":"assistant","content":"Yesterday between 18:00 and 19:30 checkout was slow because the shipping quote calls ` +
		`took 2-3 s instead of about 200 ms. The database and app servers had headroom and the payment provider reported no incident, ` +
		`so the delay came from the shipping quote service. Next steps: ask the carrier whether they had an incident, ` +
		`add a timeout and a cached fallback quote, and alert on the quote latency."},` +
		`{"role":"user","content":"The carrier says their API was fine. Our logs show many lines like ` +
		`\"quote request queued: pool exhausted (max=20, waiting=143)\" from 18:02 on. What does that mean, and how do we fix it?"},` +
		`{"role":"assistant","content":"It means the HTTP client that calls the carrier has a pool of 20 connections and all 20 were busy, ` +
		`so 143 requests waited for one. Each wait adds to the checkout time even when the carrier answers fast. ` +
		`Check whether the pool size is per app server, whether responses are read to the end (a body left unread keeps its connection), ` +
		`and whether the evening traffic simply needs more connections. Raising the limit is safe if the carrier allows it."},` +
		`{"role":"user","content":"We found it: a deploy at 17:55 stopped closing the response body on errors, so connections leaked until ` +
		`the pool was empty. Please rewrite the incident summary with the root cause, the timeline and three follow-up actions."}`
)

// messagesBody is chatBody's conversation as an Anthropic Messages request.
func messagesBody(model string, stream bool) []byte { return messagesBodyOf(shortConv, model, stream) }

// messagesBodyOf is conversation c as an Anthropic Messages request.
func messagesBodyOf(c conversation, model string, stream bool) []byte {
	var b []byte
	b = append(b, `{"model":"`...)
	b = append(b, model...)
	b = append(b, `","max_tokens":512,"temperature":0.7,`+
		`"system":"`+c.system+`",`+
		`"metadata":{"user_id":"ops-dashboard-7"},"messages":[`+c.turns+`]`...)
	if stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}')
}
