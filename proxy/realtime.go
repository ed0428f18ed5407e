package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bytedance/sonic"
	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// A realtime session (GET /v1/realtime?model=…, OpenAI's Realtime API) is
// a WebSocket relayed frame by frame. The key, the model and the route are
// checked and the upstream dialed before the client's upgrade is answered,
// so a refusal is a plain HTTP error and a channel that cannot be reached
// fails over to the next. Then two pumps relay the frames, one each way,
// each reading a message and writing it to the other side before reading
// the next: a side that does not read holds back the other (back-pressure),
// and no message is held beyond the one in hand. Text messages are read
// whole (up to server.max_ws_message) and looked at only past a cheap
// byte search: the upstream's for response.done usage and, when the model
// is mapped, session.created and session.updated to show the public name;
// the client's for a session.update naming a model, which gets the
// session's upstream name. Binary messages are read whole too, and relayed
// unread; each leg keeps its buffers up to maxKeptMessage between messages.

const (
	// realtimeProtocol is the subprotocol the gateway answers with when the
	// client offers it (browsers do, beside the key).
	realtimeProtocol = "realtime"
	// insecureKeyProtocol prefixes the key a browser sends as a subprotocol.
	insecureKeyProtocol = "openai-insecure-api-key."
	// betaProtocol is OpenAI-Beta: realtime=v1 as a browser sends it.
	betaProtocol = "openai-beta.realtime-v1"
	// closeGrace is how long a side that was sent a close frame has to
	// answer it before its connection is cut.
	closeGrace = time.Second
	// closeWriteWait bounds writing a close frame.
	closeWriteWait = time.Second
	// handshakeGrace bounds the wait between the upgrade answer and the
	// session's start; a client gone meanwhile never starts it.
	handshakeGrace = 10 * time.Second
	// maxKeptMessage is the largest message buffer a session keeps between
	// messages.
	maxKeptMessage = 1 << 20
	// wsWriteBuffer is the write buffer a connection is lent while it
	// writes a message (wsWriteBuffers): a message that fits
	// goes in one frame and one write (base64 audio events are several KiB;
	// past the library's 4 KiB default, one toward the upstream was two
	// frames, each its own write and random mask key, and one toward the
	// client two writes through a vector that allocates).
	wsWriteBuffer = 16 << 10
)

// wsWriteBuffers lends the connections of every session (client side and
// upstream side, one size) their write buffer while a message is written:
// an idle session holds none, about 32 KiB less per session, for which
// each message written costs one allocation of 24 bytes: fasthttp/websocket
// boxes the buffer into an interface when it gives it back
// (writePoolData, conn.go's endMessage), whatever the pool is.
var wsWriteBuffers sync.Pool

var (
	strOpenAIBeta = []byte("OpenAI-Beta")
	strWSProtocol = []byte("Sec-WebSocket-Protocol")
)

// The event names a session looks for in text messages before it reads
// any further.
var (
	responseDone  = newDotted(`"response.done"`)
	sessionEvent  = newDotted(`"session.`)
	sessionUpdate = newDotted(`"session.update"`)
	usageEvents   = []dotted{responseDone}               // the upstream's, model not mapped
	mappedEvents  = []dotted{responseDone, sessionEvent} // the upstream's, model mapped
	clientEvents  = []dotted{sessionUpdate}
)

// realtime answers GET /v1/realtime.
func (g *Gateway) realtime(ctx *fasthttp.RequestCtx) {
	if len(ctx.Request.Header.PeekBytes(strAuthorization)) == 0 {
		// A browser's key comes as a subprotocol: authenticate it as the
		// bearer token it stands for (the header goes nowhere else).
		if k := protocolKey(ctx.Request.Header.PeekBytes(strWSProtocol)); k != "" {
			ctx.Request.Header.SetBytesK(strAuthorization, "Bearer "+k)
		}
	}
	x := g.open(ctx, opRealtime, "realtime", styleOpenAI)
	if x == nil {
		return
	}
	x.stream = true
	model := ctx.QueryArgs().Peek("model")
	if len(model) == 0 {
		g.fail(ctx, x, &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: "model",
			Message: "model: query parameter is required"})
		return
	}
	if !websocket.FastHTTPIsWebSocketUpgrade(ctx) {
		g.fail(ctx, x, errorf(400, codec.KindInvalidRequest, "", "This endpoint takes a WebSocket upgrade."))
		return
	}
	st := takeForwardState()
	defer st.release()
	cands, ok := g.candidates(ctx, x, opRealtime, nil, model, st.cands[:0])
	if !ok {
		return
	}
	up, c, e := g.dialRealtime(ctx, x, cands)
	if e != nil {
		g.fail(ctx, x, e)
		return
	}
	s := &session{g: g, x: x, ch: c.ch, up: up, upModel: c.model, rename: c.model != x.model, events: usageEvents,
		idle: c.ch.cfg.Timeouts.Idle, total: c.ch.cfg.Timeouts.Total, deadline: x.start.Add(c.ch.cfg.Timeouts.Total)}
	if s.rename {
		s.events = mappedEvents
	}
	u := websocket.FastHTTPUpgrader{
		WriteBufferSize: wsWriteBuffer,
		WriteBufferPool: &wsWriteBuffers,
		Subprotocols:    []string{realtimeProtocol},
		// The key is the credential, not a cookie: any origin may use it.
		CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
		Error: func(ctx *fasthttp.RequestCtx, status int, reason error) {
			writeError(ctx, x, errorf(status, codec.KindInvalidRequest, "", "%s", reason.Error()))
		},
	}
	if err := u.Upgrade(ctx, s.run); err != nil {
		up.Close() //nolint:errcheck
		g.finish(x)
		return
	}
	x.status = fasthttp.StatusSwitchingProtocols
	g.sessions.pending.Add(1)
	s.abandon = time.AfterFunc(handshakeGrace, s.abandoned)
}

// protocolKey finds the key among the subprotocols a browser offers.
func protocolKey(v []byte) string {
	for p := range strings.SplitSeq(string(v), ",") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(p), insecureKeyProtocol); ok {
			return k
		}
	}
	return ""
}

// dialRealtime dials the candidates' realtime endpoints in turn, with the
// breaker and failover as forward has them, and returns the first that
// accepted the session; when none did, the error forward's would be.
func (g *Gateway) dialRealtime(ctx *fasthttp.RequestCtx, x *exchange, cands []candidate) (*websocket.Conn, candidate, *codec.Error) {
	var f failover
	for _, c := range cands {
		uri, ok := c.ch.appendURI(x.uri[:0], codec.OpRealtime, c.model, false)
		if !ok {
			continue
		}
		f.served = true
		x.uri = uri
		if !g.readyChannel(x, c.ch, &f.limitWait) {
			continue
		}
		x.attempts++
		x.channel, x.channelEscaped = c.ch.name, c.ch.escaped
		conn, e, retry := g.dialOne(ctx, x, c)
		if e == nil {
			return conn, c, nil
		}
		g.releaseChannel(x)
		x.tried(c.ch, e)
		f.failed(e)
		if !retry {
			break
		}
	}
	return nil, candidate{}, f.exhausted(x)
}

// dialOne opens the session on one channel: ws(s)://<base>/realtime?model=
// with the channel's key and the client's OpenAI-Beta header. It returns
// the error and whether another channel may be tried when it fails.
func (g *Gateway) dialOne(ctx *fasthttp.RequestCtx, x *exchange, c candidate) (*websocket.Conn, *codec.Error, bool) {
	target := wsURL(string(x.uri), c.model)
	h := http.Header{}
	if len(c.ch.auth) > 0 {
		h.Set(string(c.ch.style.authHeader), string(c.ch.nextAuth()))
	}
	if b := ctx.Request.Header.PeekBytes(strOpenAIBeta); len(b) > 0 {
		h.Set("OpenAI-Beta", string(b))
	} else if bytes.Contains(ctx.Request.Header.PeekBytes(strWSProtocol), []byte(betaProtocol)) {
		h.Set("OpenAI-Beta", "realtime=v1")
	}
	h.Set("X-Request-Id", string(x.id))
	h.Set("User-Agent", "rosetta")
	t := c.ch.cfg.Timeouts
	d := websocket.Dialer{HandshakeTimeout: t.Connect + t.FirstByte, WriteBufferSize: wsWriteBuffer, WriteBufferPool: &wsWriteBuffers}
	nd := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		var err error
		if c.ch.demo != nil {
			conn, err = c.ch.demo.dial()
		} else {
			conn, err = nd.DialContext(ctx, network, addr)
		}
		if err != nil {
			return nil, &dialError{err}
		}
		return conn, nil
	}
	addr := target
	if u, err := url.Parse(target); err == nil {
		addr = u.Host
		d.TLSClientConfig = upstreamTLS(u.Hostname())
	}
	conn, resp, err := d.DialContext(context.Background(), target, h)
	now := time.Now()
	if err == nil {
		c.ch.answered(outcomeOK, now)
		c.ch.breaker.success()
		return conn, nil, false
	}
	if resp != nil && resp.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		status := resp.StatusCode
		c.ch.answered(outcomeOf(status), now)
		e := upstreamError(c.ch, x.style, status, body)
		if name := c.ch.style.http.RequestIDHeader; name != "" {
			e.UpstreamRequestID = resp.Header.Get(name)
		}
		if status == 429 || status >= 500 || status == 401 || status == 403 {
			if status == 429 || status >= 500 { // as forward's attempt reads them
				e.RateLimit = c.ch.style.ReadRateLimit(httpHeader(resp.Header), body)
			}
			c.ch.breaker.failure(now)
			x.cause = httpCause(status, e.Message)
			c.ch.stats.noteError(now, x.cause)
			g.log.Warn("upstream refused the realtime session", "id", string(x.id), "channel", c.ch.name,
				"status", status, "err", e.Message)
			return nil, e, true
		}
		c.ch.breaker.success() // the client's own mistake: the channel is healthy
		return nil, e, false
	}
	c.ch.breaker.failure(now)
	c.ch.answered(transportOutcome(err), now)
	g.log.Warn("upstream realtime dial failed", "id", string(x.id), "channel", c.ch.name, "err", err)
	if resp != nil { // answered, but not with an upgrade
		x.cause = httpCause(resp.StatusCode, "no WebSocket upgrade")
		c.ch.stats.noteError(now, x.cause)
		return nil, errorf(502, codec.KindUpstream, "upstream_error",
			"The upstream provider did not accept the WebSocket upgrade (HTTP %d).", resp.StatusCode), true
	}
	x.cause = transportCause(err, addr)
	c.ch.stats.noteError(now, x.cause)
	return nil, transportError(err), true
}

// httpHeader reads net/http's headers for a dialect's rate-limit reader.
type httpHeader http.Header

func (h httpHeader) Peek(key string) []byte {
	if v := http.Header(h).Get(key); v != "" {
		return []byte(v)
	}
	return nil
}

// wsURL is the WebSocket URL of an http(s) endpoint, with the model as
// its query.
func wsURL(endpoint, model string) string {
	if rest, ok := strings.CutPrefix(endpoint, "https://"); ok {
		endpoint = "wss://" + rest
	} else if rest, ok := strings.CutPrefix(endpoint, "http://"); ok {
		endpoint = "ws://" + rest
	}
	return endpoint + "?model=" + url.QueryEscape(model)
}

// session is one realtime session being relayed.
type session struct {
	g        *Gateway
	x        *exchange
	ch       *channel
	up       *websocket.Conn
	client   *websocket.Conn // set when the session starts
	upModel  string          // the model's name upstream
	rename   bool            // the model is mapped: session events get the public name
	events   []dotted        // the upstream events read further
	idle     time.Duration
	total    time.Duration
	deadline time.Time

	abandon *time.Timer // ends a session that never starts
	started atomic.Bool // run or abandoned took it
	timer   *time.Timer // idle and total timeouts
	last    atomic.Int64
	closing atomic.Bool            // close frames went out: the pumps end quietly
	why     atomic.Pointer[string] // the error the session ends with, if any
	cutOnce sync.Once

	toUp, toClient leg         // each relayed by its own pump
	usage          codec.Usage // owned by the upstream pump until the session ends
}

// leg is one direction of a session, relayed by one pump.
type leg struct {
	from, to *websocket.Conn
	wmu      sync.Mutex          // held while a message is written to `to`
	edit     func([]byte) []byte // a text message as it goes on
	ended    func(error)         // reading from `from` failed or it closed
	lost     func(error)         // writing to `to` failed
	msg, out []byte              // a message read whole, and a text one's edited copy
}

// closeFrame is a close code and reason to send; code 0 sends none.
type closeFrame struct {
	code   int
	reason string
}

// abandoned ends a session whose upgrade answer never reached the client.
func (s *session) abandoned() {
	if !s.started.CompareAndSwap(false, true) {
		return
	}
	s.up.Close() //nolint:errcheck
	s.x.status, s.x.errMsg = 499, "client went away before the session started"
	s.g.finish(s.x)
	s.g.sessions.pending.Add(-1)
}

// run relays the session once the client's connection is upgraded; it
// returns when both sides are closed.
func (s *session) run(client *websocket.Conn) {
	if !s.started.CompareAndSwap(false, true) {
		return
	}
	s.abandon.Stop()
	s.client = client
	limit := int64(s.g.cfg.Server.MaxWSMessage)
	client.SetReadLimit(limit)
	s.up.SetReadLimit(limit)
	s.toUp = leg{from: client, to: s.up, edit: s.fromClient, ended: s.clientEnded, lost: s.upstreamLost}
	s.toClient = leg{from: s.up, to: client, edit: s.fromUpstream, ended: s.upstreamEnded, lost: s.clientLost}
	s.g.sessions.add(s)
	s.g.metrics.openSessions.Inc()
	s.touch(time.Now())
	s.timer = time.AfterFunc(time.Hour, s.watch)
	s.timer.Reset(min(s.idle, time.Until(s.deadline)))

	done := make(chan struct{})
	go func() {
		defer close(done)
		s.pump(&s.toUp)
	}()
	s.pump(&s.toClient)
	<-done
	s.timer.Stop()
	s.cut()

	s.g.metrics.openSessions.Dec()
	s.x.usage = s.usage
	if why := s.why.Load(); why != nil {
		s.x.errMsg = *why
	}
	s.g.sessions.remove(s)
	s.g.finish(s.x)
}

// touch records a frame, for the idle timeout.
func (s *session) touch(now time.Time) { s.last.Store(now.UnixNano()) }

// watch ends a session idle (no message either way) for its channel's
// idle timeout, or open for its total timeout.
func (s *session) watch() {
	now := time.Now()
	left := s.deadline.Sub(now)
	if left <= 0 {
		s.expire("session_expired", "The session reached its time limit of "+s.total.String()+".")
		return
	}
	idleLeft := s.idle - now.Sub(time.Unix(0, s.last.Load()))
	if idleLeft <= 0 {
		s.expire("session_idle_timeout", "The session was idle for "+s.idle.String()+".")
		return
	}
	s.timer.Reset(min(left, idleLeft))
}

// expire ends a session past a timeout as OpenAI ends one past its
// maximum duration: an error event with code and message to the client
// (unless a message is being written to it then), and 1001 both ways with
// message as the reason. A timeout is the session's policy, not a fault,
// so not 1011; clients reconnect on 1001.
func (s *session) expire(code, message string) {
	if !s.closing.Load() && s.toClient.wmu.TryLock() {
		s.client.SetWriteDeadline(time.Now().Add(closeWriteWait))                 //nolint:errcheck
		s.client.WriteMessage(websocket.TextMessage, s.errorEvent(code, message)) //nolint:errcheck
		s.toClient.wmu.Unlock()
	}
	s.goingAway(message, message)
}

// errorEvent is a realtime error event of the invalid_request_error type.
func (s *session) errorEvent(code, message string) []byte {
	b := append([]byte(`{"type":"error","event_id":"event_`), s.x.id...)
	b = append(b, `","error":{"type":"invalid_request_error","code":`...)
	b = rawjson.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = rawjson.AppendString(b, message)
	return append(b, `,"param":null,"event_id":null}}`...)
}

// goingAway closes both sides with 1001 and reason; why is for end.
func (s *session) goingAway(why, reason string) {
	f := closeFrame{websocket.CloseGoingAway, reason}
	s.end(why, f, f, closeGrace)
}

// end sends the close frames (once per session: the first caller's, whose
// why, when set, is the error the session is logged with) and cuts both
// connections after grace, or at once when grace is 0.
func (s *session) end(why string, toClient, toUp closeFrame, grace time.Duration) {
	if !s.closing.CompareAndSwap(false, true) {
		return
	}
	if why != "" {
		s.why.Store(&why) // end may run on a timer's goroutine: run reads it
	}
	s.sendClose(s.client, toClient)
	s.sendClose(s.up, toUp)
	if grace == 0 {
		s.cut()
		return
	}
	t := time.Now().Add(grace)
	s.client.SetReadDeadline(t)  //nolint:errcheck
	s.up.SetReadDeadline(t)      //nolint:errcheck
	time.AfterFunc(grace, s.cut) // a side blocked writing to a peer that does not read
}

func (s *session) sendClose(c *websocket.Conn, f closeFrame) {
	if f.code != 0 {
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(f.code, f.reason), //nolint:errcheck
			time.Now().Add(closeWriteWait))
	}
}

// cut closes both connections.
func (s *session) cut() {
	s.cutOnce.Do(func() {
		s.client.NetConn().Close() //nolint:errcheck
		s.up.NetConn().Close()     //nolint:errcheck
	})
}

var errTooBig = closeFrame{websocket.CloseMessageTooBig, "message too big"}

// pump relays l's messages, one at a time, until either side ends.
func (s *session) pump(l *leg) {
	for {
		typ, r, err := l.from.NextReader()
		if err != nil {
			l.ended(err)
			return
		}
		now := time.Now()
		if l.from == s.up && s.x.ttfb == 0 {
			s.x.ttfb = now.Sub(s.x.start)
		}
		s.touch(now)
		l.wmu.Lock()
		l.to.SetWriteDeadline(now.Add(s.idle)) //nolint:errcheck
		rerr, werr := l.relay(typ, r)
		l.wmu.Unlock()
		if rerr != nil {
			l.ended(rerr)
			return
		}
		if werr != nil {
			l.lost(werr)
			return
		}
	}
}

// relay reads the message r reads whole and writes it to l.to, a text one
// edited. It tells a read error from a write error. Messages are read
// whole, not streamed, as one write of a whole message is the library's
// path that allocates least (none for a server's, when the message fits
// its buffer) and sends one frame.
func (l *leg) relay(typ int, r io.Reader) (rerr, werr error) {
	if l.msg, rerr = appendAll(l.msg[:0], r); rerr != nil {
		return rerr, nil
	}
	msg := l.msg
	if typ == websocket.TextMessage {
		msg = l.edit(msg)
	}
	werr = l.to.WriteMessage(typ, msg)
	if cap(l.msg) > maxKeptMessage {
		l.msg = nil
	}
	if cap(l.out) > maxKeptMessage {
		l.out = nil
	}
	return nil, werr
}

// appendAll appends what r reads to dst.
func appendAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// clientEnded ends the session for a client that closed (its close goes
// upstream), sent a message over the limit (1009 both ways), or went away
// (the upstream is closed at once).
func (s *session) clientEnded(err error) {
	var ce *websocket.CloseError
	switch {
	case s.closing.Load():
		return
	case peerClosed(err, &ce):
		s.end("", closeFrame{}, closeFrame{ce.Code, ce.Text}, closeGrace) // the library answered the client
	case errors.Is(err, websocket.ErrReadLimit):
		s.end("client message over server.max_ws_message", closeFrame{}, errTooBig, closeGrace) // the library sent the client 1009
	default:
		s.clientLost(err)
	}
}

// peerClosed reports whether err is a close frame the peer sent, and sets ce
// to it: the library reports a connection that ended without one as 1006,
// a code no frame may carry.
func peerClosed(err error, ce **websocket.CloseError) bool {
	return errors.As(err, ce) && (*ce).Code != websocket.CloseAbnormalClosure
}

// clientLost closes the upstream at once for a client gone.
func (s *session) clientLost(error) {
	s.end("client went away", closeFrame{}, closeFrame{websocket.CloseGoingAway, "client went away"}, 0)
}

// upstreamEnded ends the session for an upstream that closed (its close
// goes to the client), sent a message over the limit (1009 both ways), or
// dropped (1011 to the client).
func (s *session) upstreamEnded(err error) {
	var ce *websocket.CloseError
	switch {
	case s.closing.Load():
		return
	case peerClosed(err, &ce):
		s.end("", closeFrame{ce.Code, ce.Text}, closeFrame{}, closeGrace)
	case errors.Is(err, websocket.ErrReadLimit):
		s.end("upstream message over server.max_ws_message", errTooBig, closeFrame{}, closeGrace)
	default:
		s.upstreamLost(err)
	}
}

// upstreamLost closes the client with 1011 for an upstream connection that
// failed without a close frame.
func (s *session) upstreamLost(err error) {
	if s.closing.Load() {
		return
	}
	s.ch.broke(outcomeBroken, time.Now())
	s.g.log.Warn("realtime upstream lost", "id", string(s.x.id), "channel", s.ch.name, "err", err)
	s.up.NetConn().Close() //nolint:errcheck
	s.end("upstream connection lost", closeFrame{websocket.CloseInternalServerErr, "upstream connection lost"}, closeFrame{}, closeGrace)
}

// dotted is an event name as JSON quotes it, and the index of its dot.
type dotted struct {
	name []byte
	dot  int
}

func newDotted(name string) dotted { return dotted{[]byte(name), strings.IndexByte(name, '.')} }

// mentions reports whether msg holds one of names. It looks only around
// msg's dots, found at memchr speed: every event name has one, base64
// audio (the bulk of realtime text) none, and JSON text few. (bytes.Contains
// of these names over an 8 KiB audio event took 1 to 10 µs, by the name's
// length; this takes 0.2 to 0.4.)
func mentions(msg []byte, names []dotted) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(msg[i:], '.')
		if j < 0 {
			return false
		}
		i += j
		for _, n := range names {
			if start := i - n.dot; start >= 0 && bytes.HasPrefix(msg[start:], n.name) {
				return true
			}
		}
	}
}

// realtimeUsage is the part of a response.done event the gateway reads.
type realtimeUsage struct {
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	InputTokenDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_token_details"`
	OutputTokenDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_token_details"`
}

// counted reports whether every count of u is one, as codec's usage
// readers read counts: none negative, none past 18 digits, so that the
// session's sums are never negative.
func (u *realtimeUsage) counted() bool {
	for _, n := range [...]int{u.InputTokens, u.OutputTokens, u.InputTokenDetails.CachedTokens, u.OutputTokenDetails.ReasoningTokens} {
		if n < 0 || n > rawjson.MaxCount {
			return false
		}
	}
	return true
}

// fromUpstream reads an upstream text message: a response.done's usage is
// added to the session's, and a session.created or session.updated of a
// mapped model gets the public name. It returns the message to send.
func (s *session) fromUpstream(msg []byte) []byte {
	if !mentions(msg, s.events) {
		return msg
	}
	f := [...]rawjson.Field{{Key: "type"}, {Key: "response"}, {Key: "session"}}
	if rawjson.Lookup(msg, f[:], false) != nil {
		return msg
	}
	start, end := rawjson.StringSpan(msg, f[0])
	if start < 0 {
		return msg
	}
	switch typ := string(msg[start:end]); {
	case typ == "response.done" && f[1].Start >= 0:
		var r struct {
			Usage *realtimeUsage `json:"usage"`
		}
		if sonic.Unmarshal(msg[f[1].Start:f[1].End], &r) == nil && r.Usage != nil && r.Usage.counted() {
			s.usage.Input += r.Usage.InputTokens
			s.usage.Output += r.Usage.OutputTokens
			s.usage.CachedInput += r.Usage.InputTokenDetails.CachedTokens
			s.usage.Reasoning += r.Usage.OutputTokenDetails.ReasoningTokens
		}
	case s.rename && (typ == "session.created" || typ == "session.updated") && f[2].Start >= 0:
		out := append(s.toClient.out[:0], msg[:f[2].Start]...)
		out = rawjson.AppendReplaced(out, msg[f[2].Start:f[2].End], "model", s.x.model)
		s.toClient.out = append(out, msg[f[2].End:]...)
		return s.toClient.out
	}
	return msg
}

// fromClient reads a client's text message: a session.update naming a
// model gets the session's upstream name in its place, whatever it named,
// so that the session runs the model the key was checked for (and a
// mapped name reaches the upstream as its own). It returns the message to
// send.
func (s *session) fromClient(msg []byte) []byte {
	if !mentions(msg, clientEvents) {
		return msg
	}
	f := [...]rawjson.Field{{Key: "type"}, {Key: "session"}}
	if rawjson.Lookup(msg, f[:], false) != nil || f[1].Start < 0 {
		return msg
	}
	if start, end := rawjson.StringSpan(msg, f[0]); start < 0 || string(msg[start:end]) != "session.update" {
		return msg
	}
	session := msg[f[1].Start:f[1].End]
	m := [...]rawjson.Field{{Key: "model"}}
	if rawjson.Lookup(session, m[:], false) != nil || m[0].Start < 0 {
		return msg
	}
	if start, end := rawjson.StringSpan(session, m[0]); start >= 0 && string(session[start:end]) == s.upModel {
		return msg
	}
	out := append(s.toUp.out[:0], msg[:f[1].Start+m[0].Start]...)
	out = rawjson.AppendString(out, s.upModel)
	s.toUp.out = append(out, msg[f[1].Start+m[0].End:]...)
	return s.toUp.out
}

// sessionSet holds the open realtime sessions, for Shutdown.
type sessionSet struct {
	mu      sync.Mutex
	open    map[*session]struct{}
	pending atomic.Int64 // dialed, upgrade answered, not yet started
}

func (ss *sessionSet) add(s *session) {
	ss.mu.Lock()
	if ss.open == nil {
		ss.open = map[*session]struct{}{}
	}
	ss.open[s] = struct{}{}
	ss.mu.Unlock()
	ss.pending.Add(-1)
}

func (ss *sessionSet) remove(s *session) {
	ss.mu.Lock()
	delete(ss.open, s)
	ss.mu.Unlock()
}

func (ss *sessionSet) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.open) + int(ss.pending.Load())
}

// drain waits for the sessions to end until ctx is done, then closes those
// still open with 1001 and waits for them to end (a few seconds at most).
func (ss *sessionSet) drain(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for ss.count() > 0 {
		select {
		case <-ctx.Done():
			ss.mu.Lock()
			for s := range ss.open {
				s.goingAway("", "server shutting down")
			}
			ss.mu.Unlock()
			for stop := time.Now().Add(handshakeGrace + 2*closeGrace); ss.count() > 0 && time.Now().Before(stop); {
				<-tick.C
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
