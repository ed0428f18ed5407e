// Package proxy is the request path of the gateway: the fasthttp server and
// router, authentication, rate limits, routing to a channel with failover,
// the upstream client and the stream relay. Wire formats are not written
// here but in codec.
package proxy

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/cluster"
	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/store"
)

// Options are the parts of a gateway that are not in its configuration.
type Options struct {
	// Log receives operational events, and one access line per request
	// when AccessLog is nil. Give it a handler over an asynclog.Writer: a
	// request never waits on it. Default: slog.Default().
	Log *slog.Logger
	// AccessLog, when set, receives the access lines instead of Log: one
	// Write per request of a line in the shape of slog's JSON handler (or
	// its text handler when LogFormat is "text"), made without allocating.
	// Give it an asynclog.Writer, the same one as Log's handler.
	AccessLog io.Writer
	// LogFormat is "json" (the default) or "text", as for the handler of Log.
	LogFormat string
	// Keys, when set, is consulted for keys the configuration does not list
	// (before Store).
	Keys KeySource
	// Store, when set, holds the console's keys and channels. Its keys
	// authenticate through the key cache (a request waits on the store only
	// for a key not cached), its enabled channels are routed to beside the
	// configuration's (loaded by New and by ChannelsChanged), and /readyz
	// checks that it answers.
	Store store.Store
	// Usage, when set, receives a usage row for each request made with a
	// key, as the request ends (store.UsageWriter). Rows it refuses are
	// counted in rosetta_usage_rows_dropped_total.
	Usage UsageSink
	// Mount, when set, registers more routes on the gateway's router: the
	// console's. They are not reachable through ServeAs.
	Mount func(r *router.Router)
	// Cluster, when set, is this node in its fleet: the limiter adds the
	// other nodes' counts, and /readyz and /metrics report the members.
	Cluster *cluster.Node
	// LimitWindow is the length of the rate-limit windows (cluster.window);
	// default: a minute.
	LimitWindow time.Duration
	// LogDropped, when set, reports log lines lost to a full log buffer
	// (asynclog.Writer.Dropped), exported as a metric.
	LogDropped func() int64
	// KeyPoll and ChannelPoll are how often the store is read for keys
	// and channels changed on other nodes (this node's console applies its
	// changes at once). Defaults: 1s and 5s; a negative value turns
	// polling off.
	KeyPoll, ChannelPoll time.Duration
}

// defaultKeyPoll and defaultChannelPoll bound how long a key or channel
// changed on another node takes to hold here.
const (
	defaultKeyPoll     = time.Second
	defaultChannelPoll = 5 * time.Second
)

// Gateway serves the gateway's HTTP API.
type Gateway struct {
	cfg        *config.Config
	log        *slog.Logger
	access     *accessLog // nil: access lines go to log
	keys       *keyring
	posts      postTable   // the POST routes without parameters; read only once built
	store      store.Store // nil without one
	usage      UsageSink   // nil without one
	limiter    *ratelimit.Limiter
	cluster    *cluster.Node // nil on a single node
	server     *fasthttp.Server
	large      *fasthttp.Server // serves the connections whose headers outgrew server's buffer (headconn.go)
	handoff    *handoff         // large's listener: the connections server gives up
	serveLarge sync.Once
	api        fasthttp.RequestHandler // the API alone, for ServeAs
	metrics    *metrics
	started    time.Time
	// keep keeps the responses translated for Responses clients
	// (keepTranslated): keepResponse; nil keeps none.
	keep keepFunc

	table        atomic.Pointer[table] // swapped whole when channels change
	rebuild      sync.Mutex            // serializes table changes
	channelsSeen string                // channelsVersion of the store's list in table; under rebuild
	stopWatch    chan struct{}         // closed by Shutdown; nil without a watch
	watchDone    chan struct{}         // closed when watchStore returns
	stopOnce     sync.Once
	ready        storeCheck

	exchanges sync.Pool
	sessions  sessionSet // open realtime sessions
	responses *respIndex // the Responses API's responses made here
}

// maxHeaderSize bounds a request's headers; larger ones get 431. It is the
// read buffer of the server that serves the connections whose headers
// outgrow readBufferSize (headconn.go).
const maxHeaderSize = 16 << 10

// storeStartTimeout bounds loading the store's channels at start.
const storeStartTimeout = 10 * time.Second

// New builds a gateway from a validated configuration, with the store's
// channels when opts.Store is set.
func New(cfg *config.Config, opts Options) (*Gateway, error) {
	g := &Gateway{cfg: cfg, log: opts.Log, store: opts.Store, usage: opts.Usage, cluster: opts.Cluster,
		limiter: ratelimit.New(fleetOf(opts.Cluster), opts.LimitWindow), started: time.Now()}
	if g.log == nil {
		g.log = slog.Default()
	}
	g.access = newAccessLog(opts.AccessLog, opts.LogFormat)
	src := chainKeys{newStaticKeys(cfg.Keys)}
	if opts.Keys != nil {
		src = append(src, opts.Keys)
	}
	if opts.Store != nil {
		src = append(src, storeKeys{opts.Store})
	}
	var err error
	if g.keys, err = newKeyring(src); err != nil {
		return nil, fmt.Errorf("cannot create key cache: %w", err)
	}
	g.metrics = newMetrics(g, opts.LogDropped)
	if err = g.loadTable(); err != nil {
		return nil, err
	}
	g.responses = newRespIndex(opts.Store, cfg.Store.ResponsesRetention, g.log)
	g.keep = g.keepResponse
	keyEvery, channelEvery := cmp.Or(opts.KeyPoll, defaultKeyPoll), cmp.Or(opts.ChannelPoll, defaultChannelPoll)
	if g.store != nil && keyEvery > 0 && channelEvery > 0 {
		// Where the key journal stands before any key is cached: every
		// change after this point is seen.
		g.stopWatch, g.watchDone = make(chan struct{}), make(chan struct{})
		seen := g.pollKeys(-1, storeStartTimeout)
		go func() {
			defer close(g.watchDone)
			g.watchStore(seen, keyEvery, channelEvery, g.stopWatch)
		}()
	}
	g.posts = newPostTable(g.postRoutes())
	g.api = g.handler(nil)
	h := g.handler(opts.Mount)
	g.server = g.newServer(h, readBufferSize)
	g.server.ErrorHandler = g.firstServerError
	g.server.ConnState = connState
	g.large = g.newServer(h, maxHeaderSize)
	g.handoff = newHandoff()
	return g, nil
}

// newServer is the gateway's HTTP server with a read buffer of readBuf
// bytes, which bounds a request's headers (headconn.go).
func (g *Gateway) newServer(h fasthttp.RequestHandler, readBuf int) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:      h,
		ErrorHandler: g.serverError,
		Name:         "rosetta",
		// Bodies come as streams, read by the gateway: a JSON one whole
		// under server.max_body (readBody), an upload into its spool under
		// server.max_upload (upload.go), never held whole in memory.
		// fasthttp then keeps each connection's read buffer for the
		// connection's life, an open stream's too, where ReduceMemoryUsage
		// would hand it back: hence a small one (headconn.go).
		StreamRequestBody:  true,
		MaxRequestBodySize: int(g.cfg.Server.MaxBody),
		// The clock is read at the first ctx.Time(), begin's, once the
		// body is in: not as the handler is called, with only the head
		// read, which would count the client's upload in the latency and
		// take it from the upstream's deadline. (A multipart upload is
		// read by its handler, which starts the clock again once it is in.)
		LazyRequestTime: true,
		HeaderReceived:  g.headerReceived,
		// An upload is relayed as its bytes: fasthttp must not read it
		// into a form of its own first.
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  2 * time.Minute, // a whole request, headers and body
		IdleTimeout:                  2 * time.Minute,
		// ReduceMemoryUsage hands the connection's write buffer back as
		// soon as a response is written (and, were bodies not streamed,
		// its read buffer as soon as a request is read).
		ReduceMemoryUsage:     true,
		ReadBufferSize:        readBuf,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		Logger:                fasthttpLogger{g.log},
	}
}

// loadTable builds the first routing table: the configuration's channels,
// then the store's. A store channel that cannot be used is logged, not
// fatal, so that a bad console edit cannot keep the gateway from starting.
func (g *Gateway) loadTable() error {
	t, err := g.buildTable(g.configSpecs(), nil, nil)
	if err != nil {
		return err
	}
	g.table.Store(t)
	if g.store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeStartTimeout)
	defer cancel()
	skipped, err := g.loadChannels(ctx)
	if err != nil {
		for _, ch := range t.channels {
			ch.close()
		}
		return err
	}
	if skipped != nil {
		g.log.Warn("store channels left out", "err", joinSkipped(skipped))
	}
	return nil
}

// handler is the gateway's router, with mount's routes when it is set,
// behind the request-id header every response carries.
func (g *Gateway) handler(mount func(*router.Router)) fasthttp.RequestHandler {
	r := router.New()
	for _, e := range g.posts {
		r.POST(e.path, e.route.handle)
	}
	r.GET("/v1/models", g.listModels)
	r.GET("/v1/models/{model:*}", g.retrieveModel)
	r.GET("/v1/realtime", g.realtime)
	r.GET("/v1/responses/{id}", func(ctx *fasthttp.RequestCtx) { g.responseCall(ctx, "responses.get", opResponseGet) })
	r.DELETE("/v1/responses/{id}", func(ctx *fasthttp.RequestCtx) { g.responseCall(ctx, "responses.delete", opResponseDelete) })
	r.POST("/v1/responses/{id}/cancel", func(ctx *fasthttp.RequestCtx) { g.responseCall(ctx, "responses.cancel", opResponseCancel) })
	r.GET("/v1/responses/{id}/input_items", func(ctx *fasthttp.RequestCtx) {
		g.responseCall(ctx, "responses.input_items", opResponseItems)
	})
	r.POST("/v1beta/models/{target}", g.geminiPost)
	r.GET("/v1beta/models", g.geminiModels)
	r.GET("/v1beta/models/{model}", g.geminiModels)
	r.GET("/healthz", g.healthz)
	r.GET("/readyz", g.readyz)
	r.GET("/metrics", g.metrics.handler)
	if mount != nil {
		mount(r)
	}
	r.NotFound = g.notFound
	r.MethodNotAllowed = g.methodNotAllowed
	r.HandleMethodNotAllowed = true
	r.PanicHandler = g.panicked
	return func(ctx *fasthttp.RequestCtx) {
		hc := headRead(ctx)
		// Every response carries a request id, health checks included.
		clientHeaders.fill(&ctx.Response.Header) // a new connection's: with what a stream parked
		// PeekCanonical: the names are fasthttp's spelling, which the client's
		// have once read, and PeekBytes would spell them so again.
		given := ctx.Request.Header.PeekCanonical(strRequestID)
		if hc != nil { // kept for begin while the handler runs
			hc.id = requestID(hc.idBuf[:0], given)
			setResponse(&ctx.Response.Header, strRequestID, hc.id)
			defer func() { hc.id = nil }() // an error handler's begin, after, finds it in the header or makes one
		} else {
			var buf [40]byte
			setResponse(&ctx.Response.Header, strRequestID, requestID(buf[:0], given))
		}
		var p postRoute
		if ctx.IsPost() { // what the router would find, as it finds it (by the path as sent)
			p = g.posts.find(ctx.Request.URI().PathOriginal())
		}
		if !p.upload && !g.readBody(ctx) {
			return // refused
		}
		if p.handle != nil {
			defer g.recoverPanic(ctx) // as the router's PanicHandler
			p.handle(ctx)
			return
		}
		r.Handler(ctx)
	}
}

// postRoute is a POST route without parameters, found by its path in a
// postTable, where the router's tree walk costs about five times as much;
// upload says its body is a multipart upload, bounded by server.max_upload
// and spooled by its handler rather than read whole before routing.
type postRoute struct {
	handle fasthttp.RequestHandler
	upload bool
}

type postEntry struct {
	path  string
	route postRoute
}

// postTable holds the POST routes without parameters, each at its path's
// postIndex.
type postTable []postEntry

// newPostTable places routes by postIndex; a route missing there is a
// gateway that cannot serve it, so it panics.
func newPostTable(routes []postEntry) postTable {
	t := make(postTable, len(routes))
	for _, e := range routes {
		i := postIndex([]byte(e.path))
		if i < 0 || i >= len(t) || t[i].route.handle != nil {
			panic("proxy: POST route " + e.path + " has no index of its own in postIndex")
		}
		t[i] = e
	}
	return t
}

// find returns the route of path, the zero one when it has none.
func (t postTable) find(path []byte) postRoute {
	if i := postIndex(path); uint(i) < uint(len(t)) { // -1 too
		return t[i].route
	}
	return postRoute{}
}

// The paths of the POST routes without parameters, each named once for
// postIndex's cases and postRoutes' entries.
const (
	pathChatCompletions      = "/v1/chat/completions"
	pathCompletions          = "/v1/completions"
	pathEmbeddings           = "/v1/embeddings"
	pathRerank               = "/v1/rerank"
	pathImageGenerations     = "/v1/images/generations"
	pathImageEdits           = "/v1/images/edits"
	pathImageVariations      = "/v1/images/variations"
	pathSpeech               = "/v1/audio/speech"
	pathTranscriptions       = "/v1/audio/transcriptions"
	pathTranslations         = "/v1/audio/translations"
	pathResponses            = "/v1/responses"
	pathResponsesInputTokens = "/v1/responses/input_tokens"
	pathResponsesCompact     = "/v1/responses/compact"
	pathMessages             = "/v1/messages"
	pathCountTokens          = "/v1/messages/count_tokens"
)

// postIndex numbers the paths of postRoutes, -1 for any other: Go
// compiles the switch to a search on the length and then the bytes, where
// a map's lookup hashed the whole path first.
func postIndex(path []byte) int {
	switch string(path) {
	case pathChatCompletions:
		return 0
	case pathCompletions:
		return 1
	case pathEmbeddings:
		return 2
	case pathRerank:
		return 3
	case pathImageGenerations:
		return 4
	case pathImageEdits:
		return 5
	case pathImageVariations:
		return 6
	case pathSpeech:
		return 7
	case pathTranscriptions:
		return 8
	case pathTranslations:
		return 9
	case pathResponses:
		return 10
	case pathResponsesInputTokens:
		return 11
	case pathResponsesCompact:
		return 12
	case pathMessages:
		return 13
	case pathCountTokens:
		return 14
	}
	return -1
}

// postRoutes are the gateway's POST routes without parameters.
func (g *Gateway) postRoutes() []postEntry {
	return []postEntry{
		{pathChatCompletions, postRoute{g.chatCompletions, false}},
		{pathCompletions, postRoute{g.completions, false}},
		{pathEmbeddings, postRoute{g.embeddings, false}},
		{pathRerank, postRoute{g.rerank, false}},
		{pathImageGenerations, postRoute{g.imageGenerations, false}},
		{pathImageEdits, postRoute{g.imageEdits, true}},
		{pathImageVariations, postRoute{g.imageVariations, true}},
		{pathSpeech, postRoute{g.speech, false}},
		{pathTranscriptions, postRoute{g.transcriptions, true}},
		{pathTranslations, postRoute{g.translations, true}},
		{pathResponses, postRoute{g.responsesCreate, false}},
		{pathResponsesInputTokens, postRoute{g.responsesInputTokens, false}},
		{pathResponsesCompact, postRoute{g.responsesCompact, false}},
		{pathMessages, postRoute{g.messages, false}},
		{pathCountTokens, postRoute{g.countTokens, false}},
	}
}

// recoverPanic answers a request whose handler panicked, as the router's
// PanicHandler does for the handlers it calls.
func (g *Gateway) recoverPanic(ctx *fasthttp.RequestCtx) {
	if v := recover(); v != nil {
		g.panicked(ctx, v)
	}
}

// Serve accepts connections on ln until Shutdown.
func (g *Gateway) Serve(ln net.Listener) error {
	g.serveLarge.Do(func() { go g.large.Serve(g.handoff) }) //nolint:errcheck // ends with the handoff's close
	return g.server.Serve(headListener{ln})
}

// Shutdown stops accepting connections and waits, until ctx is done, for
// requests in flight (open streams and realtime sessions included) to
// finish; then it closes the realtime sessions still open with 1001 and
// releases the channels. Their last usage rows have been handed to Options.Usage
// when it returns, so the caller may close that next.
func (g *Gateway) Shutdown(ctx context.Context) error {
	// Closed first, the handoff ends the large server's Serve even if it
	// has not yet begun; a connection moving from now on is closed.
	g.handoff.Close()
	largeDone := make(chan error, 1)
	go func() { largeDone <- g.large.ShutdownWithContext(ctx) }()
	err := g.server.ShutdownWithContext(ctx)
	if lerr := <-largeDone; err == nil {
		err = lerr
	}
	// A realtime session's connection is hijacked: the server does not
	// wait for it.
	if serr := g.sessions.drain(ctx); err == nil {
		err = serr
	}
	if g.stopWatch != nil { // and wait, so no reload builds channels after the close below
		g.stopOnce.Do(func() { close(g.stopWatch) })
		<-g.watchDone
	}
	g.responses.close(ctx) // what is pending written, and the deletes owed made, before the caller closes the store
	g.rebuild.Lock()
	defer g.rebuild.Unlock()
	for _, ch := range g.table.Load().channels {
		ch.close()
	}
	return err
}

// fleetOf is the node as the limiter's fleet: nil (not a nil pointer in
// an interface) on a single node.
func fleetOf(n *cluster.Node) ratelimit.Fleet {
	if n == nil {
		return nil
	}
	return n
}

// LimitCounts is the limiter as the cluster gossips it (cluster.Local).
func (g *Gateway) LimitCounts() cluster.Local { return g.limiter }

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
