package proxy

import (
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/rosetta-gateway/rosetta/cluster"
)

// metrics are the gateway's Prometheus metrics, served at /metrics. Label
// values come from the configuration (endpoints, models, channels) and from
// status codes, never from client input, so their number stays bounded.
type metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *durationHistograms
	firstByte    *durationHistograms
	upstream     *prometheus.CounterVec
	tokens       *prometheus.CounterVec
	openStreams  prometheus.Gauge
	openSessions prometheus.Gauge
	usageDropped prometheus.Counter
	limited      [3]prometheus.Counter // by scopeIndex
	unrouted     metricsCache          // the series of requests with no route
	handler      fasthttp.RequestHandler
}

// latencyBuckets span a cached answer to a long generation, in seconds.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func newMetrics(g *Gateway, logDropped func() int64) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rosetta_requests_total", Help: "Client requests by endpoint, model and status.",
	}, []string{"endpoint", "model", "status"})
	m.latency = newDurationHistograms("rosetta_request_duration_seconds",
		"Time from request to the end of the response.", latencyBuckets)
	m.firstByte = newDurationHistograms("rosetta_time_to_first_byte_seconds",
		"Time from request to the first byte of the answer from upstream.", latencyBuckets)
	m.upstream = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rosetta_upstream_attempts_total", Help: "Requests sent to each channel, by outcome.",
	}, []string{"channel", "outcome"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rosetta_tokens_total", Help: "Tokens reported by upstreams (or estimated), by model and kind.",
	}, []string{"model", "kind"})
	m.openStreams = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rosetta_open_streams", Help: "Streams being relayed now.",
	})
	m.openSessions = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rosetta_open_realtime_sessions", Help: "Realtime WebSocket sessions being relayed now.",
	})
	m.usageDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rosetta_usage_rows_dropped_total", Help: "Usage rows lost because the usage buffer was full.",
	})
	limited := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rosetta_rate_limited_total", Help: "Requests refused (key, key_model) or channels passed over (channel) at their rate limits, by scope.",
	}, []string{"scope"})
	for i, scope := range limitScopes {
		m.limited[i] = limited.WithLabelValues(scope)
	}
	m.reg.MustRegister(limited)
	if g.cluster != nil {
		m.reg.MustRegister(fleetMetrics{g.cluster})
	}
	m.reg.MustRegister(m.requests, m.latency, m.firstByte, m.upstream, m.tokens, m.openStreams, m.openSessions, m.usageDropped,
		circuits{g}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if logDropped != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "rosetta_log_lines_dropped_total", Help: "Log lines lost because the log buffer was full.",
		}, func() float64 { return float64(logDropped()) }))
	}
	if f, ok := g.usage.(interface{ Failed() int64 }); ok {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "rosetta_usage_rows_failed_total", Help: "Usage rows the store refused, or not written when shutdown gave up.",
		}, func() float64 { return float64(f.Failed()) }))
	}
	m.handler = fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	return m
}

// fleetMetrics reports the cluster at the time of the scrape.
type fleetMetrics struct{ n *cluster.Node }

var (
	membersDesc = prometheus.NewDesc("rosetta_cluster_members", "Nodes this one hears from, itself included (live), and knows of (known: live, and failed ones not yet forgotten).", []string{"state"}, nil)
	gossipBytes = prometheus.NewDesc("rosetta_cluster_gossip_bytes_total", "Bytes of the gateway's gossip (counts, states, invalidations; not memberlist's probes), by direction.", []string{"direction"}, nil)
	gossipMsgs  = prometheus.NewDesc("rosetta_cluster_gossip_messages_total", "Messages of the gateway's gossip, by direction.", []string{"direction"}, nil)
	lagDesc     = prometheus.NewDesc("rosetta_cluster_counter_lag_seconds", "Age of the newest rate-limit count heard from each node that sent one lately.", []string{"node"}, nil)
	healthDesc  = prometheus.NewDesc("rosetta_cluster_health_score", "memberlist's awareness score: 0 is healthy, more means missed probes.", nil, nil)
)

func (f fleetMetrics) Describe(d chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{membersDesc, gossipBytes, gossipMsgs, lagDesc, healthDesc} {
		d <- desc
	}
}

func (f fleetMetrics) Collect(m chan<- prometheus.Metric) {
	live, known := f.n.Reach()
	m <- prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(live), "live")
	m <- prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(known), "known")
	s := f.n.Stats()
	m <- prometheus.MustNewConstMetric(gossipBytes, prometheus.CounterValue, float64(s.SentBytes.Load()), "sent")
	m <- prometheus.MustNewConstMetric(gossipBytes, prometheus.CounterValue, float64(s.ReceivedBytes.Load()), "received")
	m <- prometheus.MustNewConstMetric(gossipMsgs, prometheus.CounterValue, float64(s.SentMessages.Load()), "sent")
	m <- prometheus.MustNewConstMetric(gossipMsgs, prometheus.CounterValue, float64(s.ReceivedMessages.Load()), "received")
	m <- prometheus.MustNewConstMetric(healthDesc, prometheus.GaugeValue, float64(f.n.Health()))
	for _, mem := range f.n.Members() {
		if mem.Lag > 0 {
			m <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, mem.Lag.Seconds(), mem.Name)
		}
	}
}

// gaugeValue reads a gauge's value.
func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	if g.Write(&m) != nil {
		return 0
	}
	return m.GetGauge().GetValue()
}

// limitScopes are the values of rosetta_rate_limited_total's scope label.
var limitScopes = [...]string{scopeKey, scopeKeyModel, scopeChannel}

// scopeIndex is the index of a scope in limitScopes.
func scopeIndex(scope string) int {
	for i, s := range limitScopes {
		if s == scope {
			return i
		}
	}
	panic("BUG: unknown limit scope " + scope)
}

// resolveChannel looks up a new channel's counters. A channel rebuilt
// under the same name gets the same counters.
func (m *metrics) resolveChannel(ch *channel) {
	for o := range ch.attempts {
		ch.attempts[o] = m.upstream.WithLabelValues(ch.name, outcomeNames[o])
	}
}

// resolveRoute looks up a new route's token counters.
func (m *metrics) resolveRoute(r *route) {
	for i, kind := range [...]string{"input", "output", "cached_input", "reasoning"} {
		r.tokens[i] = m.tokens.WithLabelValues(r.public, kind)
	}
}

// circuits reports the circuit state of the channels in the routing table
// at the time of the scrape, which changes as the console edits channels.
type circuits struct{ g *Gateway }

var circuitDesc = prometheus.NewDesc("rosetta_channel_circuit_open",
	"1 while the channel's circuit is open, 0.5 half-open, 0 closed.", []string{"channel"}, nil)

func (c circuits) Describe(d chan<- *prometheus.Desc) { d <- circuitDesc }

func (c circuits) Collect(m chan<- prometheus.Metric) {
	for _, ch := range c.g.table.Load().channels {
		m <- prometheus.MustNewConstMetric(circuitDesc, prometheus.GaugeValue, ch.breaker.openness(), ch.name)
	}
}

// outcome classifies one upstream attempt.
type outcome uint8

const (
	outcomeOK          outcome = iota // answered (2xx)
	outcomeClientError                // a 4xx the client caused
	outcomeRateLimited                // 429
	outcomeAuthError                  // 401 or 403: the channel's credentials
	outcomeServerError                // 5xx
	outcomeTimeout                    // no answer in time
	outcomeUnreachable                // could not connect
	outcomeBroken                     // the connection or the stream failed
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"ok", "client_error", "rate_limited", "auth_error", "server_error", "timeout", "unreachable", "broken"}

// failed reports whether the upstream is to blame for the outcome.
func (o outcome) failed() bool { return o != outcomeOK && o != outcomeClientError }

// answered records the outcome of an attempt on the channel.
func (ch *channel) answered(o outcome, now time.Time) {
	ch.attempts[o].Inc()
	ch.stats.attempt(now, o.failed())
}

// broke records that an attempt already recorded as answered failed after
// all: its response could not be read, or its stream broke.
func (ch *channel) broke(o outcome, now time.Time) {
	ch.attempts[o].Inc()
	ch.stats.failure(now)
}

// outcomeOf classifies an upstream status.
func outcomeOf(status int) outcome {
	switch {
	case status < 400:
		return outcomeOK
	case status == 429:
		return outcomeRateLimited
	case status == 401 || status == 403:
		return outcomeAuthError
	case status >= 500:
		return outcomeServerError
	}
	return outcomeClientError
}

// requestMetrics are the series a finished request adds to: its
// endpoint, model and status's counter, its endpoint's latency and
// first-byte histograms.
type requestMetrics struct {
	requests           prometheus.Counter
	latency, firstByte *durationHistogram
}

// requestMetrics returns x's series from a cache: its route's, whose
// model is the route's, or for a request with no route (a 401, a 404, a
// key's 429) the gateway's, by model too. A label lookup hashes every
// value and takes a lock, costing more than the observation.
func (m *metrics) requestMetrics(x *exchange) *requestMetrics {
	c, k := &m.unrouted, metricsKey{endpoint: x.endpoint, model: x.model, status: x.status, stream: x.stream}
	if x.route != nil {
		c, k.model = &x.route.metrics, ""
	}
	if r := c.get(k); r != nil {
		return r
	}
	r := m.resolveRequest(x)
	c.put(k, r)
	return r
}

func (m *metrics) resolveRequest(x *exchange) *requestMetrics {
	var b [8]byte
	return &requestMetrics{
		requests:  m.requests.WithLabelValues(x.endpoint, x.model, string(strconv.AppendInt(b[:0], int64(x.status), 10))),
		latency:   m.latency.of(x.endpoint, x.stream),
		firstByte: m.firstByte.of(x.endpoint, x.stream),
	}
}

// metricsCache keeps requestMetrics by endpoint, model, status and
// stream. It is copied on write, so a read takes no lock; its keys are
// few (endpoints × statuses seen × 2, × the models of requests with no
// route), and past maxCachedMetrics no more are kept. The first keys put
// are found by comparing them in turn, before the map: a route's few
// usual ones (its endpoint's 200, streamed or not) are most lookups, and
// hashing a key's strings for the map cost more than the observation.
type metricsCache struct {
	mu sync.Mutex
	m  atomic.Pointer[metricsSnapshot]
}

type metricsSnapshot struct {
	first []metricsEntry // the first keys put, at most firstMetrics
	m     map[metricsKey]*requestMetrics
}

type metricsEntry struct {
	k metricsKey
	r *requestMetrics
}

type metricsKey struct {
	endpoint, model string
	status          int
	stream          bool
}

const (
	// maxCachedMetrics bounds a metricsCache, whose copies cost its size.
	maxCachedMetrics = 1024
	firstMetrics     = 4
)

func (c *metricsCache) get(k metricsKey) *requestMetrics {
	s := c.m.Load()
	if s == nil {
		return nil
	}
	for i := range s.first {
		if s.first[i].k == k {
			return s.first[i].r
		}
	}
	return s.m[k]
}

func (c *metricsCache) put(k metricsKey, v *requestMetrics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if _, ok := old.m[k]; ok || len(old.m) >= maxCachedMetrics {
			return // put by another miss meanwhile, or full
		}
	}
	s := &metricsSnapshot{m: make(map[metricsKey]*requestMetrics, 1)}
	if old != nil {
		maps.Copy(s.m, old.m)
		s.first = old.first
	}
	s.m[k] = v
	if len(s.first) < firstMetrics {
		s.first = append(s.first[:len(s.first):len(s.first)], metricsEntry{k, v}) // a copy: readers hold the old one
	}
	c.m.Store(s)
}

// observe records a finished exchange. A token count of 0 is not added:
// each addition is an atomic one, and cached and reasoning tokens are
// mostly 0.
func (m *metrics) observe(x *exchange) {
	r := m.requestMetrics(x)
	r.requests.Inc()
	r.latency.observe(x.elapsed)
	if x.ttfb > 0 {
		r.firstByte.observe(x.ttfb)
	}
	if u := x.usage; u.Input+u.Output > 0 && x.route != nil {
		t := &x.route.tokens
		for i, n := range [...]int{u.Input, u.Output, u.CachedInput, u.Reasoning} {
			if n > 0 {
				t[i].Add(float64(n))
			}
		}
	}
}
