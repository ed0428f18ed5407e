package proxy

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/cluster"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// healthz answers while the process serves HTTP at all.
func (g *Gateway) healthz(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"status":"ok"}`)
}

// readyz answers 200 when the store (if any) answers and at least one
// channel can take traffic, else 503; the body lists each channel's
// circuit state.
func (g *Gateway) readyz(ctx *fasthttp.RequestCtx) {
	channelReady := false
	b := []byte(`{"channels":[`)
	for i, ch := range g.table.Load().channels {
		if i > 0 {
			b = append(b, ',')
		}
		state := ch.breaker.String()
		channelReady = channelReady || state != "open"
		b = append(b, `{"name":`...)
		b = rawjson.AppendString(b, ch.name)
		b = append(b, `,"type":`...)
		b = rawjson.AppendString(b, ch.kind)
		b = append(b, `,"circuit":"`...)
		b = append(b, state...)
		b = append(b, `"}`...)
	}
	b = append(b, ']')
	if g.cluster != nil {
		b = appendCluster(b, g.cluster)
	}
	storeReady := true
	if g.store != nil {
		storeReady = g.ready.ping(g) == nil
		if storeReady {
			b = append(b, `,"store":"ok"`...)
		} else {
			b = append(b, `,"store":"unreachable"`...)
		}
	}
	if channelReady && storeReady {
		b = append(b, `,"status":"ready"}`...)
	} else {
		b = append(b, `,"status":"unavailable"}`...)
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// appendCluster writes the fleet as this node sees it: its members, each
// with the age of the newest count heard from it (-1: none lately), and
// memberlist's health score (0 is healthy).
func appendCluster(b []byte, n *cluster.Node) []byte {
	b = append(b, `,"cluster":{"node":`...)
	b = rawjson.AppendString(b, n.Name())
	b = append(b, `,"health":`...)
	b = strconv.AppendInt(b, int64(n.Health()), 10)
	live, known := n.Reach()
	b = append(b, `,"live":`...)
	b = strconv.AppendInt(b, int64(live), 10)
	b = append(b, `,"known":`...)
	b = strconv.AppendInt(b, int64(known), 10)
	b = append(b, `,"members":[`...)
	for i, m := range n.Members() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = rawjson.AppendString(b, m.Name)
		b = append(b, `,"addr":`...)
		b = rawjson.AppendString(b, m.Addr)
		b = append(b, `,"version":`...)
		b = rawjson.AppendString(b, m.Version)
		b = append(b, `,"counts_age_ms":`...)
		b = strconv.AppendInt(b, max(m.Lag.Milliseconds(), -1), 10)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// Store probes: at most one ping per storeCheckTTL whatever the rate of
// probes, each bounded by storePingTimeout.
const (
	storeCheckTTL    = time.Second
	storePingTimeout = time.Second
)

// storeCheck remembers the last store ping. Probes that arrive while one
// pings wait for its answer rather than sending their own.
type storeCheck struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

func (c *storeCheck) ping(g *Gateway) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < storeCheckTTL {
		return c.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), storePingTimeout)
	defer cancel()
	c.err = g.store.Ping(ctx)
	c.at = time.Now()
	if c.err != nil {
		g.log.Warn("store does not answer", "err", c.err)
	}
	return c.err
}
