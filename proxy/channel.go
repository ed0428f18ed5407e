package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/config"
)

// channel is one upstream provider endpoint with its connection pool, its
// credentials and its health.
type channel struct {
	name    string
	escaped string // name as the access line writes it (escapeName)
	kind    string // config channel type
	style   *dialect
	// version is the API version the channel speaks (its api_version, or
	// the style's default), "" for a style without versions.
	version string
	// versionValue is version as the version header's value.
	versionValue []byte
	id           int64 // the store's channel id; 0 for a channel of the configuration file
	cfg          config.Channel
	client       *fasthttp.HostClient
	demo         *demoUpstream // the in-process upstream of a demo channel
	base         string        // base URL, without a trailing slash
	// ops has bit op set for each operation the channel serves: its
	// style's API has it, and its configured endpoints, if any, name its
	// family.
	ops uint32
	// translates: the channel serves the Responses API through its chat
	// API (its endpoints, if any, name the responses family, whether or
	// not they name chat); a native one does too, for what cannot go to
	// its /responses as it is (translatesResponses).
	translates bool
	// auth holds the credential header's value for each of the
	// channel's keys, used in turn.
	auth    [][]byte
	next    atomic.Uint32 // round-robin position in auth
	breaker breaker
	// attempts counts requests to the channel by outcome (a Prometheus
	// counter per outcome, resolved once); stats keeps what the console
	// shows, and outlives an edit of the channel.
	attempts [numOutcomes]prometheus.Counter
	stats    *channelStats
	// limit counts the channel's requests and tokens against limits (its
	// rpm and tpm, for the whole fleet); nil when it has none.
	limit  *ratelimit.State
	limits ratelimit.Limits
	// uris are upstream URLs of the channel's requests, parsed, by URL
	// (copy on write, under urisMu): fasthttp would parse a request's URL
	// again at each request (1 % of a request's CPU), where most go to one
	// of a few. At most maxParsedURIs are kept.
	uris   atomic.Pointer[map[string]*fasthttp.URI]
	urisMu sync.Mutex
}

// maxParsedURIs bounds a channel's parsed URLs: its operations' paths, a
// Gemini channel's for each model and method.
const maxParsedURIs = 256

// setURI sets the URL of req, an upstream request of the channel: parsed
// already when the channel has it (parsed reports it), else parsed (and
// kept when keep says it is a URL that requests share) by the client.
func (ch *channel) setURI(req *fasthttp.Request, uri []byte, keep bool) (parsed bool) {
	if m := ch.uris.Load(); m != nil {
		if u := (*m)[string(uri)]; u != nil {
			req.SetURI(u) // a copy: u is only read
			return true
		}
	}
	req.SetRequestURIBytes(uri)
	if keep {
		ch.keepURI(uri)
	}
	return false
}

// keepURI parses uri into the channel's URLs, unless it has it or has
// maxParsedURIs already.
func (ch *channel) keepURI(uri []byte) {
	ch.urisMu.Lock()
	defer ch.urisMu.Unlock()
	var old map[string]*fasthttp.URI
	if p := ch.uris.Load(); p != nil {
		old = *p
	}
	if len(old) >= maxParsedURIs || old[string(uri)] != nil {
		return
	}
	u := new(fasthttp.URI)
	if u.Parse(nil, uri) != nil {
		return
	}
	u.DisablePathNormalizing = true // as the client (DisablePathNormalizing) sets it before sending
	m := make(map[string]*fasthttp.URI, len(old)+1)
	maps.Copy(m, old)
	m[string(uri)] = u
	ch.uris.Store(&m)
}

// maxUpstreamConns caps the connections of one channel: one per request in
// flight, each open stream holding one. 8192 capped the open streams a node
// could serve per channel below DESIGN's 10,000.
const maxUpstreamConns = 65536

// newChannel builds the upstream client of a configured channel; id is its
// store id, 0 for a channel of the configuration file. A demo channel gets
// its own in-process upstream.
func newChannel(c config.Channel, id int64, log *slog.Logger) (*channel, error) {
	ch := &channel{name: c.Name, escaped: escapeName(c.Name), kind: c.Type, style: styleOf(c.Type), id: id, cfg: c, stats: new(channelStats)}
	ch.breaker.init(log, c.Name, c.Breaker.Failures, c.Breaker.Cooldown)
	if h := ch.style.http; h.VersionHeader != "" {
		ch.version = c.APIVersion
		if ch.version == "" {
			ch.version = h.DefaultVersion
		}
		ch.versionValue = oneLine([]byte(ch.version))
	}
	for _, k := range c.APIKeys {
		ch.auth = append(ch.auth, oneLine([]byte(ch.style.http.AuthPrefix+k))) // as fasthttp would set it
	}
	for _, op := range codec.Ops() {
		if codec.Serves(ch.style, op) && (len(c.Endpoints) == 0 || slices.Contains(c.Endpoints, op.Endpoint())) &&
			(op.Endpoint() != respFamily || c.Responses == config.ResponsesNative) {
			ch.ops |= 1 << op
		}
	}
	ch.translates = codec.Serves(ch.style, codec.OpGenerate) && (len(c.Endpoints) == 0 || slices.Contains(c.Endpoints, respFamily))
	var dial func() (net.Conn, error)
	if c.Type == "demo" {
		ch.demo = newDemoUpstream(c.Pace)
		dial = ch.demo.dial
	}
	base := c.BaseURL
	if dial != nil {
		base = "http://" + c.Name + ".demo.invalid/v1"
	}
	u, err := url.Parse(base)
	if err != nil {
		ch.close()
		return nil, fmt.Errorf("channel %s: cannot parse base_url: %w", c.Name, err)
	}
	ch.base = strings.TrimSuffix(base, "/")
	secure := u.Scheme == "https"
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
		if secure {
			addr = net.JoinHostPort(u.Hostname(), "443")
		}
	}
	t := c.Timeouts
	d := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
	var tlsCfg *tls.Config
	if secure {
		tlsCfg = upstreamTLS(u.Hostname())
	}
	ch.client = &fasthttp.HostClient{
		Addr:                addr,
		Name:                "rosetta",
		IsTLS:               secure,
		TLSConfig:           tlsCfg, // used by Dial: the connection it returns is TLS already
		MaxConns:            maxUpstreamConns,
		MaxIdleConnDuration: 30 * time.Second,
		// The connection idle the shortest goes out next: its memory and
		// its socket's are still in the cache. fasthttp's default, FIFO,
		// goes round all of them, as many as the client connections at
		// the peak, each cold by its turn.
		ConnPoolStrategy:         fasthttp.LIFO,
		MaxResponseBodySize:      256 << 20,
		DisablePathNormalizing:   true,
		NoDefaultUserAgentHeader: true,
		// The answer's header names are kept as the upstream spelled
		// them: normalizing the twenty or so that an API sends cost 2 % of
		// a request's CPU, for the two or three the gateway reads, which
		// it finds ignoring case (canonicalReader, passSameStyle).
		DisableHeaderNamesNormalizing: true,
		Dial: func(addr string) (net.Conn, error) {
			var conn net.Conn
			var err error
			if dial != nil {
				if conn, err = dial(); err == nil {
					conn = newTimedConn(conn, t.FirstByte, t.Idle)
				}
			} else {
				conn, err = dialApart(func() (net.Conn, error) { return dialUpstream(d, addr, tlsCfg, t) })
			}
			if err != nil {
				return nil, &dialError{err}
			}
			return conn, nil
		},
	}
	return ch, nil
}

// dialUpstream connects to addr: a timedConn, under TLS (tlsConn) when
// tlsCfg is set.
// The connect timeout bounds the dial and the handshake together.
func dialUpstream(d *net.Dialer, addr string, tlsCfg *tls.Config, t config.Timeouts) (net.Conn, error) {
	deadline := time.Now().Add(t.Connect)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := newTimedConn(conn, t.FirstByte, t.Idle)
	if tlsCfg == nil {
		return c, nil
	}
	return handshake(c, tlsCfg, deadline)
}

// dialApart dials on a goroutine of its own. Go's dial (a TLS handshake
// all the more) is deep enough to grow the calling goroutine's stack from
// 8 to 16 KiB, and the caller is a client connection's goroutine, which
// relays the stream that follows with the grown stack until a collection
// shrinks it: 2 to 4 KiB more per open stream (bench -hold). A goroutine
// costs about a microsecond; a dial, a TCP handshake.
func dialApart(dial func() (net.Conn, error)) (conn net.Conn, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err = dial()
	}()
	<-done
	return conn, err
}

// close releases the channel once no new request can pick it: its idle
// connections, and its demo upstream, which waits for the streams it serves.
func (ch *channel) close() {
	if ch.client != nil {
		ch.client.CloseIdleConnections()
	}
	if ch.demo != nil {
		ch.demo.close()
	}
}

// appendURI appends the URL of op for model on the channel; ok is false
// when the channel does not serve op (its style has no such operation, or
// its endpoints leave its family out).
func (ch *channel) appendURI(dst []byte, op codec.Op, model string, stream bool) (_ []byte, ok bool) {
	if !ch.serves(op) {
		return dst, false
	}
	return ch.appendPath(dst, op, model, stream)
}

// appendPath appends the URL of op for model in the channel's API,
// whether or not its endpoints let clients reach op there.
func (ch *channel) appendPath(dst []byte, op codec.Op, model string, stream bool) (_ []byte, ok bool) {
	return ch.style.http.Path(append(dst, ch.base...), op, model, stream)
}

// serves reports whether the channel serves op.
func (ch *channel) serves(op codec.Op) bool { return ch.ops&(1<<op) != 0 }

// keyFor is the number of the key (from 1) a request of the channel uses:
// its key numbered key (past the last it counts round) when key > 0, else
// the next one in turn; 0 for a channel without keys.
func (ch *channel) keyFor(key int) int {
	n := len(ch.auth)
	switch {
	case n == 0:
		return 0
	case key > 0:
		return (key-1)%n + 1
	}
	return int(ch.next.Add(1)-1)%n + 1
}

// setHeaders sets the channel's API version and the credential of its key
// numbered key (keyFor; 0: none) on a new request (with no header but its
// URL and method).
func (ch *channel) setHeaders(req *fasthttp.Request, key int) {
	pairs := requestPairsOf(&req.Header)
	if len(ch.style.versionHeader) > 0 {
		setNew(&req.Header, pairs, ch.style.versionHeader, ch.versionValue)
	}
	if key > 0 {
		setNew(&req.Header, pairs, ch.style.authHeader, ch.auth[key-1])
	}
}

// nextAuth is the value of the credential header for the channel's next
// key; the channel has at least one.
func (ch *channel) nextAuth() []byte { return ch.auth[int(ch.next.Add(1)-1)%len(ch.auth)] }

// dialError marks a failure to connect: the request never reached the
// upstream, so any channel may be tried next.
type dialError struct{ err error }

func (e *dialError) Error() string { return "cannot connect: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }
