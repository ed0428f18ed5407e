package proxy

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/codec"
)

// exchange is one client request on its way through the gateway: what the
// access log reports and what must be settled when it ends. A streamed
// response hands it to its relay, which ends it when the stream closes.
type exchange struct {
	g        *Gateway
	endpoint string
	idBuf    [40]byte
	id       []byte
	start    time.Time
	style    *dialect   // the client's
	op       *operation // nil for a request that calls no model

	key     *Key
	model   string // public model name
	route   *route
	channel string
	// channelEscaped is channel as the access line writes it.
	channelEscaped string
	attempts       int
	stream         bool
	utility        bool // no usage row: a model listing, an operation that is not metered
	status         int
	ttfb           time.Duration // until the first byte of the response body
	elapsed        time.Duration
	usage          codec.Usage
	units          int // what the request asks for in its operation's unit (images, characters of speech)
	errMsg         string
	// The attempts that failed, with the cause of the last one in words
	// until it is noted (tried), and when the last one ended; trace, for
	// a request of the playground (ServeAs), receives every attempt.
	tries   []Attempt
	cause   string
	triedAt time.Time
	trace   *[]Attempt

	// The limits the request is counted under, each holding a
	// reservation of reserve tokens (reserved for the key's, which the
	// headers report) until finish settles it.
	limit        *ratelimit.State
	reserved     int64
	modelLimit   *ratelimit.State // the key's limits on the model
	channelLimit *ratelimit.State // the channel's that answers
	reserve      int64            // the request's tokens, estimated before it is sent

	// The request as read: inbound (when the client's style reads a
	// request for routing without decoding it whole, as
	// openai.ChatRequest does) on the pass-through path; tr, the
	// canonical request and response (canonical, response), for other
	// styles and whenever a channel of another style is tried.
	inbound      inbound
	tr           *translation
	canonReady   bool
	opts         codec.Options // the client's API version
	includeUsage bool          // the client asked for usage in the stream
	framing      codec.Framing // how the client reads a stream; nil for SSE
	tagged       bool          // the request holds signatures the gateway tagged: never relayed as it is
	dropped      bool          // the attempt's translation set X-Rosetta-Dropped
	// readDropped names what decoding the client's request left out (a
	// translated Responses request's include, text.verbosity…), named in
	// X-Rosetta-Dropped with what each translated attempt leaves out.
	readDropped []string
	// ways, for a Responses creation, are the operations it may take on
	// a channel, natively or translated (takeWay); nil for any other
	// request.
	ways *respWays
	uri  []byte // the upstream URL of the attempt
	// target, when set, is what the upstream path names in place of the
	// model (a response's id); query is the upstream URL's query, if any.
	target string
	query  []byte
	// upKey pins the channel key the attempt uses (numbered from 1; 0:
	// the next in turn), and upKeyUsed is the one it used.
	upKey, upKeyUsed int
	contentType      []byte // an upload's Content-Type, sent upstream as it is; nil for JSON
	// upload is an upload's body (nil for any other request), and
	// upBody and upLen the attempt's: read from it again, the model
	// spliced in.
	upload  *spool
	upBody  io.Reader
	upLen   int
	watch   watch // the client, while it waits for a whole answer
	bodyLen int
	buf     []byte // scratch for answers, error bodies and headers; parked while a stream runs
	parked  bool   // buf is parked (parkBuf)
}

// translation is what only a request decoded whole or translated uses: the
// canonical request, and the canonical response of a translation. An
// exchange takes one from translations when it first needs it and hands it
// back when it ends, so the pass-through path, and the streams it relays,
// hold none (656 bytes).
type translation struct {
	canon codec.Request
	resp  codec.Response
}

var translations = sync.Pool{New: func() any { return new(translation) }}

// canonical is the request in the canonical form (decoded once: canonReady).
func (x *exchange) canonical() *codec.Request { return &x.translation().canon }

// response is the canonical response of a translation.
func (x *exchange) response() *codec.Response { return &x.translation().resp }

func (x *exchange) translation() *translation {
	if x.tr == nil {
		x.tr = translations.Get().(*translation)
	}
	return x.tr
}

// dropTranslation hands the exchange's translation back, emptied.
func (x *exchange) dropTranslation() {
	if t := x.tr; t != nil {
		t.canon.Reset()
		t.resp.Reset()
		translations.Put(t)
		x.tr = nil
	}
}

// Header names spelled as fasthttp normalizes them, set with SetCanonical:
// SetBytesKV would copy and normalize them again at every request.
var (
	strRequestID      = []byte("X-Request-Id")
	strAccept         = []byte("Accept")
	strCacheControl   = []byte("Cache-Control")
	strAccelBuffering = []byte("X-Accel-Buffering") // nginx in front: do not buffer the stream
	strNoCache        = []byte("no-cache")
	strNo             = []byte("no")
)

// inbound is a client's request as its style's own reader read it for
// routing (openai.ChatRequest), without decoding it whole: it splices the
// model for a channel of the same style, decodes into the canonical form
// without checking the body again, and goes back to its pool when the
// exchange ends.
type inbound interface {
	AppendUpstream(dst, body []byte, model string) []byte
	Unchanged(model string) bool // AppendUpstream would copy body as it is
	DecodeRequest(body []byte, c *codec.Request) *codec.Error
	Release()
}

// begin starts an exchange of client style s: request id and clock.
func (g *Gateway) begin(ctx *fasthttp.RequestCtx, endpoint string, s *dialect) *exchange {
	x, _ := g.exchanges.Get().(*exchange)
	if x == nil {
		x = &exchange{g: g}
	}
	x.endpoint, x.start, x.style = endpoint, requestTime(ctx), s
	x.unparkBuf()
	if id := handlerID(ctx); id != nil {
		x.id = append(x.idBuf[:0], id...) // set by the router, as the header says
	} else if id := ctx.Response.Header.PeekCanonical(strRequestID); len(id) > 0 {
		x.id = append(x.idBuf[:0], id...) // set by the router
	} else {
		x.id = requestID(x.idBuf[:0], ctx.Request.Header.PeekCanonical(strRequestID))
		setResponse(&ctx.Response.Header, strRequestID, x.id)
	}
	return x
}

// requestTime is the request's time as fasthttp reads it (LazyRequestTime:
// at this first call, after the body was read), else now.
func requestTime(ctx *fasthttp.RequestCtx) time.Time {
	if t := ctx.Time(); !t.IsZero() {
		return t
	}
	return time.Now()
}

// requestID keeps a client's own request id when it is a sane token, else
// makes one.
func requestID(dst, given []byte) []byte {
	if n := len(given); n > 0 && n <= cap(dst) && isToken(given) {
		return append(dst, given...)
	}
	return appendNewID(dst)
}

// appendNewID appends a new request id: "req_" and 96 random bits in
// hex, from two random words, eight digits at a time (hex8).
func appendNewID(dst []byte) []byte {
	var id [4 + 24]byte
	copy(id[:], "req_")
	a, b := rand.Uint64(), rand.Uint64()
	binary.BigEndian.PutUint64(id[4:], hex8(uint32(a>>32)))
	binary.BigEndian.PutUint64(id[12:], hex8(uint32(a)))
	binary.BigEndian.PutUint64(id[20:], hex8(uint32(b)))
	return append(dst, id[:]...)
}

// hex8 is v's eight lower-case hex digits, the first in the top byte:
// the nibbles are spread one to a byte, and each byte is turned into its
// digit at once ('0' added, and 39 more to those of 10 and up, reaching
// 'a'): a dozen word operations for eight digits, where a table took a
// shift, a mask, a lookup and a store for each.
func hex8(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101 // 1 where the nibble is 10 or more
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}

func isToken(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// fail answers with an error in the client's style and ends the exchange.
func (g *Gateway) fail(ctx *fasthttp.RequestCtx, x *exchange, e *codec.Error) {
	writeError(ctx, x, e)
	g.finish(x)
}

// writeError writes e as the response, in the exchange's style.
func writeError(ctx *fasthttp.RequestCtx, x *exchange, e *codec.Error) {
	x.status, x.errMsg = e.Status, e.Message
	ctx.Response.ResetBody()
	ctx.SetStatusCode(e.Status)
	if e.RateLimit != (codec.RateLimit{}) {
		x.buf = x.style.SetRateLimit(canonicalWriter{&ctx.Response.Header}, x.buf[:0], e.RateLimit)
	}
	if e.UpstreamRequestID != "" {
		ctx.Response.Header.SetBytesK(strUpstreamRequestID, e.UpstreamRequestID)
	}
	ctx.SetContentType("application/json")
	x.buf = x.style.AppendError(x.buf[:0], e)
	ctx.SetBody(x.buf)
}
