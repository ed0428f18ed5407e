// Package proxy is the request path of the gateway: the fasthttp server and
// router, authentication, rate limits, routing to a channel with failover,
// the upstream client and the stream relay. Wire formats are not written
// here but in codec.
package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/proxy/ratelimit"
)

// Options are the parts of a gateway that are not in its configuration.
type Options struct {
	// Log receives operational events and one access line per request.
	// Give it a handler over an asynclog.Writer: a request never waits on it.
	// Default: slog.Default().
	Log *slog.Logger
	// Keys, when set, is consulted for keys the configuration does not list.
	Keys KeySource
	// Remote adds other nodes' rate-limit counts (nil on a single node).
	Remote ratelimit.Remote
	// LogDropped, when set, reports log lines lost to a full log buffer
	// (asynclog.Writer.Dropped), exported as a metric.
	LogDropped func() int64
}

// Gateway serves the gateway's HTTP API.
type Gateway struct {
	cfg      *config.Config
	log      *slog.Logger
	keys     *keyring
	limiter  *ratelimit.Limiter
	routes   map[string]*route
	channels []*channel
	models   []string // public model names, sorted
	server   *fasthttp.Server
	metrics  *metrics
	demos    []*demoUpstream
	started  time.Time

	exchanges sync.Pool
}

// New builds a gateway from a validated configuration.
func New(cfg *config.Config, opts Options) (*Gateway, error) {
	g := &Gateway{cfg: cfg, log: opts.Log, limiter: ratelimit.New(opts.Remote), started: time.Now()}
	if g.log == nil {
		g.log = slog.Default()
	}
	var src KeySource = newStaticKeys(cfg.Keys)
	if opts.Keys != nil {
		src = chainKeys{src, opts.Keys}
	}
	var err error
	if g.keys, err = newKeyring(src); err != nil {
		return nil, fmt.Errorf("cannot create key cache: %w", err)
	}
	if err = g.buildRoutes(); err != nil {
		g.closeDemos()
		return nil, err
	}
	g.metrics = newMetrics(g, opts.LogDropped)
	g.server = &fasthttp.Server{
		Handler:               g.handler(),
		ErrorHandler:          g.serverError,
		Name:                  "rosetta",
		MaxRequestBodySize:    int(cfg.Server.MaxBody),
		ReadTimeout:           2 * time.Minute, // a whole request, headers and body
		IdleTimeout:           2 * time.Minute,
		ReadBufferSize:        4 << 10,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		Logger:                fasthttpLogger{g.log},
	}
	return g, nil
}

// buildRoutes creates the channels and the public model → channels table.
func (g *Gateway) buildRoutes() error {
	g.routes = map[string]*route{}
	for _, c := range g.cfg.Channels {
		var dial func() (net.Conn, error)
		if c.Type == "demo" {
			d := newDemoUpstream(c.Pace)
			g.demos = append(g.demos, d)
			dial = d.dial
		}
		ch, err := newChannel(c, g.log, dial)
		if err != nil {
			return err
		}
		g.channels = append(g.channels, ch)
		for _, public := range c.PublicModels() {
			up, _ := c.UpstreamModel(public)
			r := g.routes[public]
			if r == nil {
				quoted := rawjson.AppendString(nil, public)
				r = &route{public: public, escaped: string(quoted[1 : len(quoted)-1])}
				g.routes[public] = r
				g.models = append(g.models, public)
			}
			r.channels = append(r.channels, ch)
			r.upstream = append(r.upstream, up)
			r.weights = append(r.weights, c.Weight)
		}
	}
	for _, r := range g.routes {
		sortRoute(r)
	}
	slices.Sort(g.models)
	return nil
}

func (g *Gateway) handler() fasthttp.RequestHandler {
	r := router.New()
	r.GET("/v1/models", g.listModels)
	r.POST("/v1/chat/completions", g.chatCompletions)
	r.POST("/v1/messages", g.messages)
	r.POST("/v1/messages/count_tokens", g.countTokens)
	r.POST("/v1beta/models/{target}", g.geminiPost)
	r.GET("/v1beta/models", g.geminiModels)
	r.GET("/v1beta/models/{model}", g.geminiModels)
	r.GET("/healthz", g.healthz)
	r.GET("/readyz", g.readyz)
	r.GET("/metrics", g.metrics.handler)
	r.NotFound = g.notFound
	r.MethodNotAllowed = g.methodNotAllowed
	r.HandleMethodNotAllowed = true
	r.PanicHandler = g.panicked
	return func(ctx *fasthttp.RequestCtx) {
		// Every response carries a request id, health checks included.
		var buf [40]byte
		ctx.Response.Header.SetBytesKV(strRequestID, requestID(buf[:0], ctx.Request.Header.PeekBytes(strRequestID)))
		r.Handler(ctx)
	}
}

// Serve accepts connections on ln until Shutdown.
func (g *Gateway) Serve(ln net.Listener) error { return g.server.Serve(ln) }

// Shutdown stops accepting connections and waits, until ctx is done, for
// requests in flight (open streams included) to finish.
func (g *Gateway) Shutdown(ctx context.Context) error {
	err := g.server.ShutdownWithContext(ctx)
	g.closeDemos()
	for _, ch := range g.channels {
		ch.client.CloseIdleConnections()
	}
	return err
}

func (g *Gateway) closeDemos() {
	for _, d := range g.demos {
		d.close()
	}
	g.demos = nil
}

// chainKeys looks a key up in each source in turn.
type chainKeys []KeySource

func (c chainKeys) KeyByHash(h [32]byte) (*Key, error) {
	for _, s := range c {
		if k, err := s.KeyByHash(h); k != nil || err != nil {
			return k, err
		}
	}
	return nil, nil
}

// fasthttpLogger sends fasthttp's own messages to slog.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Warn(fmt.Sprintf(format, args...), "component", "fasthttp")
}
