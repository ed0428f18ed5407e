package proxy

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

const (
	relayBufSize = 2 << 10  // per stream, in and out; grows only for an event larger than this
	maxPooledOut = 64 << 10 // a grown output buffer larger than this is not kept
	maxEventSize = 8 << 20  // an upstream event larger than this ends the stream
	// flushAt bounds the events a relay gathers before it writes, when
	// the upstream sends faster than it is relayed.
	flushAt = 16 << 10
)

// relay streams an upstream SSE body to the client event by event. The
// fasthttp server calls WriteTo on the connection's goroutine; every Write
// becomes one HTTP chunk and one flush. The relay writes what it has just
// before it would wait for the upstream (its connection tells it, see
// timedConn.beforeWait), so no event waits for a later one, and a burst of
// events, however the upstream split it into chunks, costs one write (one
// per 4 KiB of fasthttp's write buffer), not one per event. Per event it
// allocates nothing.
type relay struct {
	g    *Gateway
	x    *exchange
	c    candidate
	resp *fasthttp.Response
	body io.Reader

	in   []byte // upstream bytes: in[r:w] are not yet consumed
	r, w int
	// out holds events ready for the client. It is taken from outBufs
	// (outp) when there is an event to relay and handed back once written,
	// so that a stream waiting on its upstream holds no output buffer.
	out  []byte
	outp *[]byte

	rewrite    bool // put the public model name into each chunk
	stripUsage bool // drop the usage-only chunk the client did not ask for

	// Translation between styles: upstream events are decoded into
	// canonical ones and encoded in the client's style. On a pass-through
	// of another style than OpenAI's, sniff decodes events only to read the
	// usage.
	dec, sniff codec.StreamDecoder
	enc        codec.StreamEncoder
	events     []codec.Event
	data       []byte // scratch for multi-line event data
	fresh      []byte // scratch for events turned into array elements
	elements   int    // array elements written, for a Gemini client without SSE
	eof        bool
	failed     error // the upstream stream broke
	clientGone bool
	finished   bool

	client  io.Writer // during WriteTo
	written int64
	werr    error       // the client's write failed
	waitFn  func() bool // beforeWait, bound once per pooled relay
}

var relays = sync.Pool{New: func() any {
	rl := &relay{in: make([]byte, relayBufSize)}
	rl.waitFn = rl.beforeWait
	return rl
}}

var outBufs = sync.Pool{New: func() any { b := make([]byte, 0, relayBufSize); return &b }}

// takeOut gives the relay an output buffer unless it has one.
func (rl *relay) takeOut() {
	if rl.out == nil {
		rl.outp = outBufs.Get().(*[]byte)
		rl.out = (*rl.outp)[:0]
	}
}

// dropOut hands back the output buffer, which holds nothing left to send.
// (A buffer the relay was built with, not taken from the pool, is kept.)
func (rl *relay) dropOut() {
	if rl.outp == nil {
		rl.out = rl.out[:0]
		return
	}
	b := rl.out[:0]
	if cap(b) > maxPooledOut {
		b = make([]byte, 0, relayBufSize)
	}
	*rl.outp = b
	outBufs.Put(rl.outp)
	rl.out, rl.outp = nil, nil
}

// startStream takes over a streamed upstream response. It reads up to the
// first event before answering the client, so that an upstream that fails
// before its first event can still be failed over.
func (g *Gateway) startStream(ctx *fasthttp.RequestCtx, x *exchange, c candidate, resp *fasthttp.Response) (*codec.Error, bool) {
	rl := relays.Get().(*relay)
	rl.g, rl.x, rl.c, rl.resp, rl.body = g, x, c, resp, resp.BodyStream()
	rl.rewrite = c.model != x.model
	rl.stripUsage = !x.includeUsage
	switch {
	case !passThrough(x, c.ch):
		rl.dec = c.ch.style.dialect().decoders.Get().(codec.StreamDecoder)
		rl.dec.Reset()
		rl.enc = x.style.dialect().encoders.Get().(codec.StreamEncoder)
		rl.enc.Reset(x.streamInfo(c.ch.style))
	case x.style != styleOpenAI:
		rl.sniff = c.ch.style.dialect().decoders.Get().(codec.StreamDecoder)
		rl.sniff.Reset()
	}
	if !rl.fill(1) {
		err := rl.failed
		if err == nil {
			err = errors.New("upstream closed the stream without an event")
		}
		rl.release()
		now := time.Now()
		c.ch.breaker.failure(now)
		c.ch.broke(transportOutcome(err), now)
		g.log.Warn("upstream stream failed before its first event", "id", string(x.id), "channel", c.ch.name, "err", err)
		return transportError(err), true
	}
	c.ch.breaker.success()
	x.status, x.ttfb = 200, time.Since(x.start)
	ctx.SetStatusCode(200)
	ctx.Response.Header.SetContentTypeBytes(strEventStream)
	if x.geminiArray {
		ctx.Response.Header.SetContentTypeBytes(strJSON)
	}
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	ctx.SetBodyStream(rl, -1)
	g.metrics.openStreams.Inc()
	return nil, false
}

// SupportsBodyWriteTo tells fasthttp to use WriteTo, chunk by chunk.
func (rl *relay) SupportsBodyWriteTo() bool { return true }

// WriteTo relays events until the upstream ends or the client goes away.
// On an upstream connection of its own dialing it gathers events until the
// next read would wait (or flushAt bytes are ready); otherwise it writes
// after every read that completed an event.
func (rl *relay) WriteTo(w io.Writer) (int64, error) {
	rl.client = w
	want := 1
	if c := upstreamConn(rl.resp); c != nil {
		c.beforeWait, want = rl.waitFn, flushAt
		defer func() { c.beforeWait = nil }()
	}
	for rl.werr == nil && rl.fill(want) {
		rl.flushOut()
	}
	return rl.written, rl.werr
}

// flushOut writes the events ready for the client and hands back the output
// buffer.
func (rl *relay) flushOut() {
	if len(rl.out) == 0 || rl.werr != nil {
		return
	}
	m, err := rl.client.Write(rl.out)
	rl.written += int64(m)
	rl.dropOut()
	if err != nil {
		rl.clientGone, rl.werr = true, err
	}
}

// beforeWait is the upstream connection's hook: it writes what is ready
// before the relay waits for the upstream, and reports whether the client
// is still there to wait for.
func (rl *relay) beforeWait() bool {
	rl.flushOut()
	return rl.werr == nil
}

// Read is the plain io.Reader form of WriteTo.
func (rl *relay) Read(p []byte) (int, error) {
	if len(rl.out) == 0 && !rl.fill(1) {
		return 0, io.EOF
	}
	n := copy(p, rl.out)
	rl.out = rl.out[:copy(rl.out, rl.out[n:])]
	if len(rl.out) == 0 {
		rl.dropOut()
	}
	return n, nil
}

// fill moves the complete events in the input to out, reading from the
// upstream until out holds want bytes or the stream is over. It reports
// false when the stream is over and nothing is left to send.
func (rl *relay) fill(want int) bool {
	for !rl.finished && rl.werr == nil {
		for {
			n := sse.Next(rl.in[rl.r:rl.w])
			if n == 0 {
				break
			}
			rl.takeOut()
			rl.event(rl.in[rl.r : rl.r+n])
			rl.r += n
		}
		if len(rl.out) >= want {
			return true
		}
		switch {
		case rl.failed != nil:
			rl.takeOut()
			rl.x.errMsg = rl.failed.Error()
			if rl.x.ttfb > 0 { // the client has a stream open: tell it in-band
				rl.streamError(transportError(rl.failed))
			}
			rl.finished = true
		case rl.eof:
			rl.takeOut()
			if rl.r < rl.w { // a last event without its blank line
				rl.event(rl.in[rl.r:rl.w])
				rl.r = rl.w
			}
			rl.end()
			rl.finished = true
		default:
			if len(rl.out) == 0 {
				rl.dropOut() // nothing to send while waiting on the upstream
			}
			rl.read()
		}
	}
	if len(rl.out) > 0 {
		return true
	}
	rl.dropOut()
	return false
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
	switch {
	case rl.dec != nil:
		rl.transcode(ev)
		return
	case rl.sniff != nil:
		rl.sniffUsage(ev)
		rl.emit(append(rl.out, ev...))
		return
	}
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

// transcode decodes one upstream event into canonical events and encodes
// them in the client's style.
func (rl *relay) transcode(ev []byte) {
	name, _ := sse.Field(ev, "event")
	data, multi, ok := sse.Data(ev)
	if !ok {
		return // a comment or keep-alive: nothing to say in another style
	}
	if multi {
		rl.data = sse.AppendData(rl.data[:0], ev)
		data = rl.data
	}
	events, err := rl.dec.Decode(rl.events[:0], name, data)
	rl.events = events
	if err != nil {
		rl.failed = err
		return
	}
	rl.encode(events)
}

// encode appends canonical events in the client's style.
func (rl *relay) encode(events []codec.Event) {
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case codec.EventUsage:
			rl.x.usage = e.Usage
		case codec.EventError:
			rl.x.errMsg = e.Err.Message
		}
		rl.emit(rl.enc.Encode(rl.out, e))
	}
}

// emit makes out the client's bytes: as they are, or, for a Gemini client
// that did not ask for SSE, the new SSE events turned into array elements.
func (rl *relay) emit(out []byte) {
	if !rl.x.geminiArray {
		rl.out = out
		return
	}
	fresh := append(rl.fresh[:0], out[len(rl.out):]...)
	rl.fresh = fresh
	out = out[:len(rl.out)]
	for len(fresh) > 0 {
		n := sse.Next(fresh)
		if n == 0 {
			n = len(fresh)
		}
		if data, _, ok := sse.Data(fresh[:n]); ok {
			if rl.elements == 0 {
				out = gemini.AppendArrayStart(out)
			}
			out = gemini.AppendArrayElement(out, rl.elements, data)
			rl.elements++
		}
		fresh = fresh[n:]
	}
	rl.out = out
}

// end closes a translated stream: what the upstream's end implies, then
// what ends the stream in the client's style.
func (rl *relay) end() {
	switch {
	case rl.dec != nil:
		rl.events = rl.dec.End(rl.events[:0])
		rl.encode(rl.events)
		rl.emit(rl.enc.End(rl.out))
	case rl.sniff != nil:
		for _, e := range rl.sniff.End(rl.events[:0]) {
			if e.Kind == codec.EventUsage {
				rl.x.usage = e.Usage
			}
		}
	}
	if rl.x.geminiArray {
		if rl.elements == 0 {
			rl.out = gemini.AppendArrayStart(rl.out)
		}
		rl.out = gemini.AppendArrayEnd(rl.out)
	}
}

// streamError ends the client's stream with an error in its style.
func (rl *relay) streamError(e *codec.Error) {
	if rl.enc != nil {
		ev := codec.Event{Kind: codec.EventError, Err: e}
		rl.emit(rl.enc.Encode(rl.out, &ev))
		rl.end()
		return
	}
	rl.emit(rl.x.style.appendStreamError(rl.out, e))
}

// sniffUsage reads the usage of a relayed event of Anthropic's or Gemini's
// style.
func (rl *relay) sniffUsage(ev []byte) {
	name, _ := sse.Field(ev, "event")
	data, multi, ok := sse.Data(ev)
	if !ok || multi {
		return
	}
	events, err := rl.sniff.Decode(rl.events[:0], name, data)
	rl.events = events
	if err != nil {
		return
	}
	for i := range events {
		if events[i].Kind == codec.EventUsage {
			rl.x.usage = events[i].Usage
		}
	}
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
		now := time.Now()
		rl.c.ch.breaker.failure(now)
		rl.c.ch.broke(transportOutcome(rl.failed), now)
	}
	g.metrics.openStreams.Dec()
	rl.release()
	g.finish(x)
	return nil
}

func (rl *relay) release() {
	rl.resp.CloseBodyStream() //nolint:errcheck // interrupts an unfinished upstream read
	fasthttp.ReleaseResponse(rl.resp)
	if rl.dec != nil {
		rl.c.ch.style.dialect().decoders.Put(rl.dec)
		rl.x.style.dialect().encoders.Put(rl.enc)
	}
	if rl.sniff != nil {
		rl.c.ch.style.dialect().decoders.Put(rl.sniff)
	}
	rl.dropOut()
	in, events := rl.in, rl.events[:0]
	if len(in) > relayBufSize {
		in = make([]byte, relayBufSize) // do not keep a grown buffer in the pool
	}
	*rl = relay{in: in, events: events, waitFn: rl.waitFn}
	relays.Put(rl)
}
