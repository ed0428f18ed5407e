package proxy

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
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

	// in holds upstream bytes: in[r:w] are not yet consumed. It is taken
	// from bufs (inp) when bytes arrive and handed back while the relay
	// waits for the upstream with none kept (see readHead), so that an
	// open stream, which spends nearly all its time waiting, holds no
	// input buffer.
	in   []byte
	inp  *[]byte
	r, w int
	// out holds events ready for the client. It is taken from bufs
	// (outp) when there is an event to relay and handed back once written,
	// so that a stream waiting on its upstream holds no output buffer.
	out  []byte
	outp *[]byte

	// tc turns the upstream's events into the client's: relayed with the
	// model name put back, or translated between styles.
	tc         codec.Transcoder
	failed     error // the upstream stream broke
	eof        bool
	head       [1]byte // what a read with no input buffer reads (beside eof: no padding more)
	clientGone bool
	finished   bool
	// raw: the upstream's bytes go to the client as they are (a media
	// answer: audio, or an SSE stream the gateway does not read), as soon
	// as they arrive: in[sent:w] are not yet sent. With eventUsage set,
	// in[r:w] is the event not yet complete, kept to read its usage
	// (rawUsage) once it is.
	raw        bool
	sent       int
	eventUsage func(ev []byte) (codec.Usage, bool)
	rawUsage   codec.Usage
	// tracks: the stream names a response the gateway remembers, as soon
	// as its id is read (tracked) and again, with its last status, when
	// it ends.
	tracks, tracked bool

	client io.Writer // during WriteTo
	// reply is the client's response header, parked while WriteTo runs
	// (streampark.go); nil for a relay whose upstream header is not
	// parked either.
	reply   *fasthttp.ResponseHeader
	written int64
	werr    error       // the client's write failed
	waitFn  func() bool // beforeWait, bound once per pooled relay
}

var relays = sync.Pool{New: func() any {
	rl := &relay{}
	rl.waitFn = rl.beforeWait
	return rl
}}

// bufs holds the relays' input and output buffers, relayBufSize or grown.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, relayBufSize); return &b }}

func takeBuf() *[]byte { return bufs.Get().(*[]byte) }

// putBuf hands b, which p held, back to the pool; one grown larger than
// maxPooledOut is not kept.
func putBuf(p *[]byte, b []byte) {
	if cap(b) > maxPooledOut {
		b = make([]byte, 0, relayBufSize)
	}
	*p = b[:0]
	bufs.Put(p)
}

// takeOut gives the relay an output buffer unless it has one.
func (rl *relay) takeOut() {
	if rl.out == nil {
		rl.outp = takeBuf()
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
	putBuf(rl.outp, rl.out)
	rl.out, rl.outp = nil, nil
}

// takeIn gives the relay an input buffer unless it has one.
func (rl *relay) takeIn() {
	if rl.in == nil {
		rl.inp = takeBuf()
		rl.in = (*rl.inp)[:cap(*rl.inp)]
	}
}

// dropIn hands back the input buffer, which holds nothing not consumed.
// (A buffer the relay was built with is kept, as by dropOut.)
func (rl *relay) dropIn() {
	rl.r, rl.w = 0, 0
	if rl.inp != nil {
		putBuf(rl.inp, rl.in)
		rl.in, rl.inp = nil, nil
	}
}

// startStream takes over a streamed upstream response. It reads up to the
// first event before answering the client, so that an upstream that fails
// before its first event can still be failed over.
func (g *Gateway) startStream(ctx *fasthttp.RequestCtx, x *exchange, c candidate, resp *fasthttp.Response) (*codec.Error, bool) {
	rl := relays.Get().(*relay)
	rl.g, rl.x, rl.c, rl.resp, rl.body = g, x, c, resp, resp.BodyStream()
	if rl.raw = x.op.media; rl.raw {
		rl.eventUsage = x.op.eventUsage // the transcoder is not used (nor read: see outcome)
	} else if passThrough(x, c.ch) {
		r := codec.Relay{IncludeUsage: x.includeUsage}
		d := x.relayStyle(c.ch)
		if d.DecodesRelayed() {
			r.Dec = c.ch.style.decoders.Get().(codec.StreamDecoder)
		}
		if c.model != x.model {
			r.Model = x.route.escaped
		}
		rl.tc.ResetPass(d, r, x.framing) // the codec's own value: one indirect call per event, not two
		rl.tracks = x.op.tracks
	} else {
		rl.tc.ResetTranslate(c.ch.style.decoders.Get().(codec.StreamDecoder),
			x.style.encoders.Get().(codec.StreamEncoder), x.streamInfo(c.ch.style), x.framing)
	}
	if !rl.fill(1) {
		err := rl.failed
		if err == nil {
			err = errors.New("upstream closed the stream without an event")
			rl.failed = err
		}
		e := rl.failure()
		rl.release()
		now := time.Now()
		c.ch.breaker.failure(now)
		c.ch.broke(transportOutcome(err), now)
		x.cause = streamCause(err)
		c.ch.stats.noteError(now, x.cause)
		g.log.Warn("upstream stream failed before its first event", "id", string(x.id), "channel", c.ch.name, "err", err)
		return e, true
	}
	c.ch.breaker.success()
	passHeaders(&ctx.Response.Header, x, c.ch, &resp.Header)
	if x.inbound != nil { // no other channel will be asked: no need to hold it while the stream lasts
		x.inbound.Release()
		x.inbound = nil
	}
	x.status, x.ttfb = 200, time.Since(x.start)
	ctx.SetStatusCode(200)
	switch {
	case rl.raw:
		ctx.Response.Header.SetContentTypeBytes(resp.Header.ContentType())
	case x.framing != nil:
		ctx.Response.Header.SetContentTypeBytes(strJSON)
	default:
		ctx.Response.Header.SetContentTypeBytes(strEventStream)
	}
	ctx.Response.Header.SetCanonical(strCacheControl, strNoCache)
	ctx.Response.Header.SetCanonical(strAccelBuffering, strNo)
	upstreamHeaders.park(&resp.Header) // passed on: the stream needs it no more
	rl.reply = &ctx.Response.Header
	x.parkBuf()
	ctx.SetBodyStream(rl, -1)
	g.metrics.openStreams.Inc()
	return nil, false
}

// failure is the client's error for a stream that broke: an event that
// could not be read, or the connection.
func (rl *relay) failure() *codec.Error {
	if !rl.raw && rl.tc.Err() != nil {
		return &codec.Error{Status: 502, Kind: codec.KindUpstream, Code: "upstream_error",
			Message: "The upstream provider's stream could not be read."}
	}
	return transportError(rl.failed)
}

// failStyle is the dialect of the event that ends a broken stream: the
// client's, or the operation's own on the pass-through path.
func (rl *relay) failStyle() codec.Dialect {
	if rl.x.op.pass != nil && passThrough(rl.x, rl.c.ch) {
		return rl.x.op.pass
	}
	return rl.x.style
}

// SupportsBodyWriteTo tells fasthttp to use WriteTo, chunk by chunk.
func (rl *relay) SupportsBodyWriteTo() bool { return true }

// WriteTo relays events until the upstream ends or the client goes away.
// On an upstream connection of its own dialing it gathers events until the
// next read would wait (or flushAt bytes are ready); otherwise it writes
// after every read that completed an event.
func (rl *relay) WriteTo(w io.Writer) (int64, error) {
	rl.client = w
	if rl.reply != nil && headerWritten(rl.reply) {
		clientHeaders.park(rl.reply)
		defer clientHeaders.fill(rl.reply) // for the trailer fasthttp writes next, and the next request
	}
	want := 1
	if c := upstreamConn(rl.resp); c != nil {
		c.beforeWait, want = rl.waitFn, flushAt
		defer func() { c.beforeWait = nil }()
	}
	for rl.werr == nil && rl.fill(want) {
		rl.flushOut()
	}
	if rl.raw && rl.werr == nil && rl.failed != nil {
		// Raw bytes have no error event: the client must see a broken
		// body (no last chunk), not a short file.
		return rl.written, rl.failed
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
// is still there to wait for. A relay with no upstream bytes kept is
// reading into head, not its input buffer: it hands the buffer back for
// the wait.
func (rl *relay) beforeWait() bool {
	rl.flushOut()
	if rl.r == rl.w && !rl.raw {
		rl.dropIn()
	}
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
		if rl.raw {
			if rl.sent < rl.w && rl.failed == nil {
				rl.relayRaw()
			}
		} else if rl.r < rl.w && rl.failed == nil {
			rl.takeOut()
			var n int
			rl.out, n = rl.tc.Transcode(rl.out, rl.in[rl.r:rl.w])
			rl.r += n
			rl.failed = rl.tc.Err()
			if rl.tracks && !rl.tracked && len(rl.tc.Relayed().ID) > 0 {
				rl.tracked = true // before the client reads the id
				rl.g.trackRelayed(rl.x, rl.c, rl.tc.Relayed())
			}
		}
		if len(rl.out) >= want {
			return true
		}
		switch {
		case rl.failed != nil:
			rl.takeOut()
			rl.x.errMsg = rl.failed.Error()
			if rl.x.ttfb > 0 && !rl.raw { // the client has a stream open: tell it in-band
				rl.out = rl.tc.Fail(rl.out, rl.failure(), rl.failStyle())
			}
			rl.finished = true
		case rl.eof && rl.raw:
			rl.readEventUsage(rl.in[rl.r:rl.w]) // a last event without its blank line
			rl.finished = true
		case rl.eof:
			rl.takeOut()
			rl.out = rl.tc.End(rl.out, rl.in[rl.r:rl.w]) // with a last event without its blank line
			rl.r = rl.w
			if rl.failed = rl.tc.Err(); rl.failed == nil {
				rl.finished = true
			}
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

// maxScannedEvent bounds the event a raw relay holds to read its usage: a
// larger one is relayed unread.
const maxScannedEvent = 1 << 20

// relayRaw moves the upstream's bytes not yet sent to the output and, with
// eventUsage, reads the usage of the events they complete.
func (rl *relay) relayRaw() {
	rl.takeOut()
	rl.out = append(rl.out, rl.in[rl.sent:rl.w]...)
	rl.sent = rl.w
	if rl.eventUsage == nil {
		rl.r = rl.w
		return
	}
	for n := sse.Next(rl.in[rl.r:rl.w]); n > 0; n = sse.Next(rl.in[rl.r:rl.w]) {
		rl.readEventUsage(rl.in[rl.r : rl.r+n])
		rl.r += n
	}
	if rl.w-rl.r > maxScannedEvent {
		rl.r = rl.w
	}
}

func (rl *relay) readEventUsage(ev []byte) {
	if rl.eventUsage == nil || len(ev) == 0 {
		return
	}
	if u, ok := rl.eventUsage(ev); ok {
		rl.rawUsage = u
	}
}

// read appends upstream bytes to the input, compacting or growing it.
func (rl *relay) read() {
	if rl.r == rl.w && !rl.raw {
		rl.readHead()
		return
	}
	rl.takeIn() // a raw relay keeps its input buffer throughout
	if rl.r > 0 {
		rl.w = copy(rl.in, rl.in[rl.r:rl.w])
		if rl.raw {
			rl.sent -= rl.r
		}
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
	rl.readErr(err)
}

// readHead reads when no upstream byte is kept: the first byte of what
// comes next into head, as this read is the one that waits for the
// upstream (beforeWait hands the input buffer back meanwhile), then the
// rest of what came into the input buffer, from the body stream's own
// buffer, without a wait. (Its reader reads the socket into a buffer of
// its own for reads shorter than that buffer: head is never what the
// socket is read into.)
func (rl *relay) readHead() {
	rl.r, rl.w = 0, 0
	n, err := rl.body.Read(rl.head[:])
	if n == 0 {
		rl.readErr(err)
		return
	}
	rl.takeIn()
	rl.w = copy(rl.in, rl.head[:n])
	if err != nil {
		rl.readErr(err)
		return
	}
	rl.read()
}

func (rl *relay) readErr(err error) {
	switch {
	case err == io.EOF:
		rl.eof = true
	case err != nil:
		rl.failed = err
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
	var failure string
	x.usage, failure = rl.outcome()
	if rl.tracked {
		g.trackRelayed(x, rl.c, rl.tc.Relayed()) // its last status
	}
	if failure != "" && x.errMsg == "" {
		x.errMsg = failure
	}
	if x.style == styleResponses {
		g.keepStreamed(rl)
	}
	g.metrics.openStreams.Dec()
	rl.release()
	g.finish(x)
	return nil
}

// outcome is the stream's usage and the message of an error the upstream
// reported in it. A raw relay has its own usage and no such message: its
// transcoder, which it does not use, holds what an earlier stream left.
func (rl *relay) outcome() (codec.Usage, string) {
	if rl.raw {
		return rl.rawUsage, ""
	}
	return rl.tc.Usage(), rl.tc.Failure()
}

func (rl *relay) release() {
	rl.resp.CloseBodyStream() //nolint:errcheck // interrupts an unfinished upstream read
	if rl.reply != nil {
		upstreamHeaders.fill(&rl.resp.Header)
	}
	fasthttp.ReleaseResponse(rl.resp)
	if dec, enc := rl.tc.Release(); enc != nil {
		rl.c.ch.style.decoders.Put(dec)
		rl.x.style.encoders.Put(enc)
	} else if dec != nil {
		rl.c.ch.style.decoders.Put(dec)
	}
	rl.dropOut()
	rl.dropIn()
	*rl = relay{tc: rl.tc, waitFn: rl.waitFn}
	relays.Put(rl)
}
