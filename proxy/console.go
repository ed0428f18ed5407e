package proxy

// What the console needs from the running gateway (console.Gateway). The
// proxy does not import the console: cmd adapts these methods, whose types
// have the same fields as the console's.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/store"
)

// ChannelStatus is a channel's health as the request path sees it.
type ChannelStatus struct {
	Name        string
	Type        string
	Source      string // sourceConfig or sourceConsole (then ID is set)
	ID          int64
	State       string    // closed, open, half-open (the circuit), or disabled
	OpenUntil   time.Time // when an open circuit lets a probe through; zero unless open
	Requests    int64     // attempts since the gateway started, tests included
	ErrorRate   float64   // share of failed attempts over the last five minutes
	LastError   string    // the last failed attempt's cause, in words; "" if none failed
	LastErrorAt time.Time
	RPM, TPM    int64 // the channel's own limits for the fleet; 0: none
}

// ModelStatus is a public model name, the channels that serve it, in the
// order they are tried, and the endpoint families they serve (chat,
// embeddings, images, audio, …).
type ModelStatus struct {
	Name      string
	Channels  []ChannelStatus
	Endpoints []string
}

const (
	sourceConfig  = "config"
	sourceConsole = "console"
	stateDisabled = "disabled"
)

// KeyChanged drops a key from the key cache, so that a revoked, edited or
// deleted key takes effect on this node's next request. Other nodes see the
// change when the cluster's gossip reaches them (cluster.Node.KeyChanged,
// which cmd calls beside this), or at their next poll of the store's key
// changes (Options.KeyPoll).
func (g *Gateway) KeyChanged(hash [sha256.Size]byte) { g.keys.invalidate(hash) }

// ChannelsChanged reloads the store's channels into routing. Requests in
// flight finish on the channels they started with. A store channel that
// cannot be used (its name is taken by the configuration file, or its
// definition is invalid) is left out and reported in skipped under its
// name; the others are in use even then. err is a failure to read the
// store, which leaves routing as it was.
func (g *Gateway) ChannelsChanged(ctx context.Context) (skipped map[string]error, err error) {
	if g.store == nil {
		return nil, nil
	}
	return g.loadChannels(ctx)
}

// Models lists the public models the allow-list permits, with the
// channels behind each.
func (g *Gateway) Models(allow []string) []ModelStatus {
	t, now := g.table.Load(), time.Now()
	k := Key{Models: allow}
	var out []ModelStatus
	for _, name := range t.models {
		if !k.Allows([]byte(name)) {
			continue
		}
		r := t.routes[name]
		m := ModelStatus{Name: name, Channels: make([]ChannelStatus, len(r.channels))}
		var ops uint32
		for i, ch := range r.channels {
			m.Channels[i] = ch.status(now)
			ops |= ch.ops
		}
		m.Endpoints = endpointsOf(ops)
		out = append(out, m)
	}
	return out
}

// Channels reports every channel, the configuration file's and the
// store's, disabled ones included.
func (g *Gateway) Channels() []ChannelStatus {
	t, now := g.table.Load(), time.Now()
	out := make([]ChannelStatus, 0, len(t.channels)+len(t.disabled))
	for _, ch := range t.channels {
		out = append(out, ch.status(now))
	}
	return append(out, t.disabled...)
}

// endpointsOf names the endpoint families of the operations in ops, in
// codec's order, each once.
func endpointsOf(ops uint32) []string {
	var out []string
	for _, op := range codec.Ops() {
		if e := op.Endpoint(); ops&(1<<op) != 0 && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func (ch *channel) status(now time.Time) ChannelStatus {
	source := sourceConfig
	if ch.id != 0 {
		source = sourceConsole
	}
	st := ChannelStatus{Name: ch.name, Type: ch.kind, Source: source, ID: ch.id, State: ch.breaker.String(),
		OpenUntil: ch.breaker.openUntil(), Requests: ch.stats.requests.Load(), ErrorRate: ch.stats.errorRate(now),
		RPM: ch.limits.RPM, TPM: ch.limits.TPM}
	if last := ch.stats.last.Load(); last != nil {
		st.LastError, st.LastErrorAt = last.cause, last.at
	}
	return st
}

// FleetNode is a node of the cluster as this one sees it.
type FleetNode struct {
	Name        string
	Addr        string // its gossip address
	Version     string
	OpenStreams int           // streams and realtime sessions, as it last told
	CountsAge   time.Duration // age of the newest rate-limit count heard from it; -1: none lately
	Self        bool          // this node
}

// Fleet lists the cluster's live nodes, this one first; nil on a single
// node.
func (g *Gateway) Fleet() []FleetNode {
	if g.cluster == nil {
		return nil
	}
	members := g.cluster.Members()
	out := make([]FleetNode, len(members))
	for i, m := range members {
		out[i] = FleetNode{Name: m.Name, Addr: m.Addr, Version: m.Version, OpenStreams: m.OpenStreams,
			CountsAge: m.Lag, Self: i == 0}
	}
	return out
}

// OpenStreams is the streams and realtime sessions this node relays now.
func (g *Gateway) OpenStreams() int {
	return int(gaugeValue(g.metrics.openStreams) + gaugeValue(g.metrics.openSessions))
}

// probeTimeout bounds TestChannel when its context has no sooner deadline.
const probeTimeout = 30 * time.Second

// TestChannel sends a one-token request ("ping", max_tokens 1, in the
// channel's own style) through the named channel and reports how long the
// whole answer took, or why it failed, in words. The test counts as a
// request of the channel: in its requests, error rate and last error, and
// in its breaker, so that a channel that fails its test looks it. A
// disabled store channel is tested too, on a client made for the test,
// which counts nothing.
func (g *Gateway) TestChannel(ctx context.Context, name string) (time.Duration, error) {
	ch := g.table.Load().channel(name)
	routed := ch != nil
	if !routed {
		var err error
		if ch, err = g.storeChannel(ctx, name); err != nil {
			return 0, err
		}
		defer ch.close()
	}
	took, o, err := ch.probe(ctx)
	if routed && o != outcomeNone {
		ch.probed(time.Now(), o, err)
	}
	return took, err
}

// probed counts a test's outcome o as an attempt of the channel.
func (ch *channel) probed(now time.Time, o outcome, err error) {
	ch.answered(o, now)
	switch {
	case o.failed():
		ch.breaker.failure(now)
		ch.stats.noteError(now, err.Error())
	case o == outcomeOK:
		ch.breaker.success()
	}
}

// storeChannel builds the store's channel called name, enabled or not, for
// a test.
func (g *Gateway) storeChannel(ctx context.Context, name string) (*channel, error) {
	if g.store == nil {
		return nil, fmt.Errorf("no channel %q", name)
	}
	list, err := g.store.Channels(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot load channels: %w", err)
	}
	for i := range list {
		if list[i].Name == name {
			c := channelConfig(&list[i])
			if err := c.Complete(); err != nil {
				return nil, err
			}
			return newChannel(c, list[i].ID, g.log)
		}
	}
	return nil, fmt.Errorf("no channel %q", name)
}

// outcomeNone is a test that reached no upstream: there was no request
// to send.
const outcomeNone = numOutcomes

// probe sends the test request of TestChannel, and classifies its outcome
// as forward does an attempt's.
func (ch *channel) probe(ctx context.Context) (time.Duration, outcome, error) {
	public := ch.cfg.PublicModels()
	if len(public) == 0 {
		return 0, outcomeNone, fmt.Errorf("channel %s serves no model", ch.name)
	}
	model, _ := ch.cfg.UpstreamModel(public[0])
	op, ping := ch.probeRequest(model)
	body, _, e := ch.style.AppendRequest(op, nil, &ping, codec.Options{Version: ch.version})
	if e != nil {
		return 0, outcomeNone, fmt.Errorf("cannot build the test request: %s", e.Message)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPost)
	uri, _ := ch.appendPath(nil, op, model, false) // a channel that serves only translated Responses is probed by chat
	req.SetRequestURIBytes(uri)
	ch.setHeaders(req, ch.keyFor(0))
	req.Header.SetContentTypeBytes(strJSON)
	req.SetBodyRaw(body)
	deadline := time.Now().Add(probeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	start := time.Now()
	err := ch.client.DoDeadline(req, resp, deadline)
	took := time.Since(start)
	switch status := resp.StatusCode(); {
	case err != nil:
		return took, transportOutcome(err), errors.New(transportCause(err, ch.client.Addr))
	case status >= 300:
		msg := upstreamError(ch, ch.style, status, resp.Body()).Message
		return took, outcomeOf(status), errors.New(httpCause(status, msg))
	}
	return took, outcomeOK, nil
}

// probeRequest is the test request of a channel: a one-token chat, or a
// rerank of one document for a channel that serves no chat (cohere's).
func (ch *channel) probeRequest(model string) (codec.Op, codec.Request) {
	if !ch.serves(codec.OpGenerate) && ch.serves(codec.OpRerank) {
		return codec.OpRerank, codec.Request{Model: model,
			Rerank: &codec.Rerank{Query: "ping", Documents: []codec.Document{{Text: "ping"}}}}
	}
	return codec.OpGenerate, codec.Request{Model: model, MaxTokens: 1, Messages: []codec.Message{
		{Role: codec.RoleUser, Parts: []codec.Part{{Kind: codec.PartText, Text: "ping"}}}}}
}

// presetKey is the ctx user value under which ServeAs passes the key a
// request is made with, as a *preset. Only code in this process can set
// it.
type presetKey struct{}

// preset is a request of ServeAs: its key, and the attempts it made.
type preset struct {
	key      *Key
	attempts []Attempt
}

// ServeAs runs the gateway's API for ctx as if key had authenticated it:
// limits, routing, usage rows and errors in the request's style are those
// of any request. A revoked key, or one whose owner is disabled, gets 401,
// as it would from a client. The console's own routes are not reachable
// this way. It returns the request's upstream attempts, in order, each
// channel tried and its outcome: all of them are made by the time it
// returns (a streamed answer is relayed after, from the attempt that
// answered).
func (g *Gateway) ServeAs(ctx *fasthttp.RequestCtx, key *store.Key) []Attempt {
	if !key.Enabled || key.OwnerDisabled {
		x := g.begin(ctx, "unknown", styleOfPath(ctx.Path()))
		g.fail(ctx, x, &codec.Error{Status: 401, Kind: codec.KindAuthentication, Code: "invalid_api_key",
			Message: "This API key has been revoked."})
		return nil
	}
	p := &preset{key: keyFromStore(key)}
	ctx.SetUserValue(presetKey{}, p)
	g.api(ctx)
	ctx.RemoveUserValue(presetKey{})
	return p.attempts
}
