package proxy

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

const (
	relayBufSize = 2 << 10 // per stream, in and out; grows only for an event larger than this
	maxEventSize = 8 << 20 // an upstream event larger than this ends the stream
)

// relay streams an upstream SSE body to the client event by event. The
// fasthttp server calls WriteTo on the connection's goroutine; every Write
// becomes one HTTP chunk and one flush. Each Write carries all the events
// already complete, so nothing waits for a later event and a burst costs one
// system call, not one per event. Per event it allocates nothing.
type relay struct {
	g    *Gateway
	x    *exchange
	c    candidate
	resp *fasthttp.Response
	body io.Reader

	in   []byte // upstream bytes: in[r:w] are not yet consumed
	r, w int
	out  []byte // events ready for the client

	rewrite    bool // put the public model name into each chunk
	stripUsage bool // drop the usage-only chunk the client did not ask for
	eof        bool
	failed     error // the upstream stream broke
	clientGone bool
	finished   bool
}

var relays = sync.Pool{New: func() any {
	return &relay{in: make([]byte, relayBufSize), out: make([]byte, 0, relayBufSize)}
}}

// startStream takes over a streamed upstream response. It reads up to the
// first event before answering the client, so that an upstream that fails
// before its first event can still be failed over.
func (g *Gateway) startStream(ctx *fasthttp.RequestCtx, x *exchange, c candidate, resp *fasthttp.Response) (*codec.Error, bool) {
	rl := relays.Get().(*relay)
	rl.g, rl.x, rl.c, rl.resp, rl.body = g, x, c, resp, resp.BodyStream()
	rl.rewrite = c.model != x.model
	rl.stripUsage = !x.req.IncludeUsage
	if !rl.fill() {
		err := rl.failed
		if err == nil {
			err = errors.New("upstream closed the stream without an event")
		}
		rl.release()
		c.ch.breaker.failure(time.Now())
		c.ch.attempts[transportOutcome(err)].Inc()
		g.log.Warn("upstream stream failed before its first event", "id", string(x.id), "channel", c.ch.name, "err", err)
		return transportError(err), true
	}
	c.ch.breaker.success()
	x.status, x.ttfb = 200, time.Since(x.start)
	ctx.SetStatusCode(200)
	ctx.Response.Header.SetContentTypeBytes(strEventStream)
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	ctx.SetBodyStream(rl, -1)
	g.metrics.openStreams.Inc()
	return nil, false
}

// SupportsBodyWriteTo tells fasthttp to use WriteTo, chunk by chunk.
func (rl *relay) SupportsBodyWriteTo() bool { return true }

// WriteTo relays events until the upstream ends or the client goes away.
func (rl *relay) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for {
		if len(rl.out) == 0 && !rl.fill() {
			return n, nil
		}
		m, err := w.Write(rl.out)
		n += int64(m)
		rl.out = rl.out[:0]
		if err != nil {
			rl.clientGone = true
			return n, err
		}
	}
}

// Read is the plain io.Reader form of WriteTo.
func (rl *relay) Read(p []byte) (int, error) {
	if len(rl.out) == 0 && !rl.fill() {
		return 0, io.EOF
	}
	n := copy(p, rl.out)
	rl.out = rl.out[:copy(rl.out, rl.out[n:])]
	return n, nil
}

// fill moves the complete events in the input to out, reading from the
// upstream until there is at least one. It reports false when the stream is
// over and nothing is left to send.
func (rl *relay) fill() bool {
	for !rl.finished {
		for {
			n := sse.Next(rl.in[rl.r:rl.w])
			if n == 0 {
				break
			}
			rl.event(rl.in[rl.r : rl.r+n])
			rl.r += n
		}
		if len(rl.out) > 0 {
			return true
		}
		switch {
		case rl.failed != nil:
			rl.x.errMsg = rl.failed.Error()
			e := transportError(rl.failed)
			if rl.x.ttfb > 0 { // the client has a stream open: tell it in-band
				rl.out = rl.x.style.appendStreamError(rl.out, e)
			}
			rl.finished = true
		case rl.eof:
			if rl.r < rl.w { // a last event without its blank line
				rl.event(rl.in[rl.r:rl.w])
				rl.r = rl.w
			}
			rl.finished = true
		default:
			rl.read()
		}
	}
	return len(rl.out) > 0
}

// read appends upstream bytes to the input, compacting or growing it.
func (rl *relay) read() {
	if rl.r > 0 {
		rl.w = copy(rl.in, rl.in[rl.r:rl.w])
		rl.r = 0
	}
	if rl.w == len(rl.in) {
		if len(rl.in) >= maxEventSize {
			rl.failed = errors.New("upstream event larger than 8 MiB")
			return
		}
		rl.in = append(rl.in, make([]byte, len(rl.in))...)
	}
	n, err := rl.body.Read(rl.in[rl.w:])
	rl.w += n
	switch {
	case err == io.EOF:
		rl.eof = true
	case err != nil:
		rl.failed = err
	}
}

// event relays one upstream event: the model name put back, usage recorded,
// and the usage-only chunk dropped when the client did not ask for it.
func (rl *relay) event(ev []byte) {
	data, multi, ok := sse.Data(ev)
	if !ok || multi || sse.IsDone(data) {
		rl.out = append(rl.out, ev...)
		return
	}
	if s, e := openai.UsageSpan(data); s >= 0 {
		if u, err := openai.DecodeUsage(data[s:e]); err == nil {
			rl.x.usage = u
		}
		if rl.stripUsage && openai.IsUsageOnlyChunk(data) {
			return
		}
	}
	if rl.rewrite {
		if s, e := openai.ModelSpan(data); s >= 0 {
			off := cap(ev) - cap(data) // data is a subslice of ev
			rl.out = append(rl.out, ev[:off+s]...)
			rl.out = append(rl.out, rl.x.route.escaped...)
			rl.out = append(rl.out, ev[off+e:]...)
			return
		}
	}
	rl.out = append(rl.out, ev...)
}

// Close ends the exchange: called by fasthttp when the stream is over or the
// client went away. Closing an unfinished upstream body closes its
// connection, which cancels the upstream request.
func (rl *relay) Close() error {
	g, x := rl.g, rl.x
	if !rl.finished {
		rl.clientGone = true
	}
	switch {
	case rl.clientGone:
		x.status = 499 // the client closed the request
		if x.errMsg == "" {
			x.errMsg = "client went away"
		}
	case rl.failed != nil:
		rl.c.ch.breaker.failure(time.Now())
		rl.c.ch.attempts[transportOutcome(rl.failed)].Inc()
	}
	g.metrics.openStreams.Dec()
	rl.release()
	g.finish(x)
	return nil
}

func (rl *relay) release() {
	rl.resp.CloseBodyStream() //nolint:errcheck // interrupts an unfinished upstream read
	fasthttp.ReleaseResponse(rl.resp)
	in, out := rl.in, rl.out
	if len(in) > relayBufSize {
		in = make([]byte, relayBufSize) // do not keep a grown buffer in the pool
	}
	*rl = relay{in: in, out: out[:0]}
	relays.Put(rl)
}
