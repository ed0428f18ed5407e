package main

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/cluster"
	"github.com/rosetta-gateway/rosetta/console"
	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// consoleGateway is the gateway as the console sees it. The proxy and the
// console do not import each other, so their status types are converted
// here. g (and node in a cluster) is set once the gateway is built, before
// it serves (the console is built first, since the gateway mounts its
// routes).
type consoleGateway struct {
	g    *proxy.Gateway
	node *cluster.Node // nil on a single node
}

var _ console.Gateway = (*consoleGateway)(nil)

// KeyChanged drops the key here and, in a cluster, on every other node.
func (c *consoleGateway) KeyChanged(hash [sha256.Size]byte) {
	c.g.KeyChanged(hash)
	if c.node != nil {
		c.node.KeyChanged(hash)
	}
}

// ChannelsChanged reloads the channels here and, in a cluster, on every
// other node.
func (c *consoleGateway) ChannelsChanged(ctx context.Context) (map[string]error, error) {
	skipped, err := c.g.ChannelsChanged(ctx)
	if c.node != nil && err == nil {
		c.node.ChannelsChanged()
	}
	return skipped, err
}

func (c *consoleGateway) TestChannel(ctx context.Context, name string) (time.Duration, error) {
	return c.g.TestChannel(ctx, name)
}

func (c *consoleGateway) ServeAs(ctx *fasthttp.RequestCtx, key *store.Key) []store.Attempt {
	return c.g.ServeAs(ctx, key)
}

func (c *consoleGateway) Models(allow []string) []console.Model {
	models := c.g.Models(allow)
	out := make([]console.Model, len(models))
	for i, m := range models {
		out[i] = console.Model{Name: m.Name, Channels: channelStatuses(m.Channels), Endpoints: m.Endpoints}
	}
	return out
}

func (c *consoleGateway) Channels() []console.ChannelStatus { return channelStatuses(c.g.Channels()) }

func (c *consoleGateway) Fleet() []console.FleetNode {
	nodes := c.g.Fleet()
	if nodes == nil {
		return nil // not in a cluster, as console.Gateway says
	}
	out := make([]console.FleetNode, len(nodes))
	for i, n := range nodes {
		out[i] = console.FleetNode(n)
	}
	return out
}

// ChannelTypes are the proxy's registry's, which holds no state: it does
// not need the gateway, so it answers even before g is set.
func (c *consoleGateway) ChannelTypes() []string { return proxy.ChannelTypes() }

// UsageEndpoints, like ChannelTypes, needs no gateway.
func (c *consoleGateway) UsageEndpoints() []string { return proxy.UsageEndpoints() }

func channelStatuses(in []proxy.ChannelStatus) []console.ChannelStatus {
	out := make([]console.ChannelStatus, len(in))
	for i, s := range in {
		out[i] = console.ChannelStatus(s)
	}
	return out
}
