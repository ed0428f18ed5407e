package proxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/store"
)

// table is the routing state: the usable channels and the index from public
// model names to them. A table is never changed once published: a change of
// channels builds a new one and swaps it in atomically, and a request keeps
// the table it started with to its end.
type table struct {
	channels []*channel // the configuration's, then the store's enabled ones
	routes   map[string]*route
	models   []string        // public model names, sorted
	disabled []ChannelStatus // the store's disabled channels, for the console
}

// channelSpec is a channel to build: its configuration and, for a channel
// made in the console, its store id (0 for the configuration file's).
type channelSpec struct {
	cfg config.Channel
	id  int64
}

// channel returns the usable channel called name, or nil.
func (t *table) channel(name string) *channel {
	if t == nil {
		return nil
	}
	for _, ch := range t.channels {
		if ch.name == name {
			return ch
		}
	}
	return nil
}

// buildTable builds the table of specs. A channel of prev whose definition
// did not change is kept as it is, with its connections, circuit breaker
// and counters; one whose definition changed gets a new client and a
// closed breaker (the edit is usually the fix) but keeps its counters.
func (g *Gateway) buildTable(specs []channelSpec, disabled []ChannelStatus, prev *table) (*table, error) {
	t := &table{routes: map[string]*route{}, disabled: disabled}
	for _, s := range specs {
		old := prev.channel(s.cfg.Name)
		if old != nil && old.id == s.id && reflect.DeepEqual(old.cfg, s.cfg) {
			t.add(old, g.metrics)
			continue
		}
		ch, err := newChannel(s.cfg, s.id, g.log)
		if err != nil {
			t.retire(prev)
			return nil, err
		}
		if old != nil {
			ch.stats = old.stats
		}
		if s.cfg.RPM > 0 || s.cfg.TPM > 0 {
			ch.limits = ratelimit.Limits{RPM: int64(s.cfg.RPM), TPM: int64(s.cfg.TPM)}
			ch.limit = g.limiter.State("channel:" + ch.name)
		}
		g.metrics.resolveChannel(ch)
		t.add(ch, g.metrics)
	}
	for _, r := range t.routes {
		sortRoute(r)
	}
	slices.Sort(t.models)
	return t, nil
}

// add makes ch usable in t under each of its public model names.
func (t *table) add(ch *channel, m *metrics) {
	t.channels = append(t.channels, ch)
	for _, public := range ch.cfg.PublicModels() {
		up, _ := ch.cfg.UpstreamModel(public)
		r := t.routes[public]
		if r == nil {
			r = &route{public: public, escaped: escapeName(public)}
			m.resolveRoute(r)
			t.routes[public] = r
			t.models = append(t.models, public)
		}
		r.channels = append(r.channels, ch)
		r.upstream = append(r.upstream, up)
		r.weights = append(r.weights, ch.cfg.Weight)
	}
}

// retireGrace is how long a channel left out of the routing table stays
// open: a request that read the old table a moment ago may still connect.
const retireGrace = 10 * time.Second

// retire releases, after retireGrace, the channels of t that keep does not
// use. Requests in flight on them finish undisturbed.
func (t *table) retire(keep *table) {
	if t == nil {
		return
	}
	for _, ch := range t.channels {
		if keep == nil || !slices.Contains(keep.channels, ch) {
			time.AfterFunc(retireGrace, ch.close)
		}
	}
}

// storeSpecs turns the store's channels into specs: the enabled ones to
// route to, the disabled ones to report. A channel whose name is taken by
// the configuration file, or whose definition is invalid, is left out and
// reported in skipped under its name.
func storeSpecs(list []store.Channel, cfg []config.Channel) ([]channelSpec, []ChannelStatus, map[string]error) {
	var specs []channelSpec
	var disabled []ChannelStatus
	var skipped map[string]error
	skip := func(name string, err error) {
		if skipped == nil {
			skipped = map[string]error{}
		}
		skipped[name] = err
	}
	for i := range list {
		sc := &list[i]
		if slices.ContainsFunc(cfg, func(c config.Channel) bool { return c.Name == sc.Name }) {
			skip(sc.Name, fmt.Errorf("channel %q: name taken by a channel of the configuration file", sc.Name))
			continue
		}
		if sc.KeysErr != nil {
			skip(sc.Name, sc.KeysErr)
			continue
		}
		if !sc.Enabled {
			disabled = append(disabled, ChannelStatus{Name: sc.Name, Type: sc.Type, Source: sourceConsole,
				ID: sc.ID, State: stateDisabled})
			continue
		}
		c := channelConfig(sc)
		if err := c.Complete(); err != nil {
			skip(sc.Name, err)
			continue
		}
		specs = append(specs, channelSpec{cfg: c, id: sc.ID})
	}
	return specs, disabled, skipped
}

// joinSkipped is storeSpecs' skipped channels as one error, by name.
func joinSkipped(skipped map[string]error) error {
	names := slices.Sorted(maps.Keys(skipped))
	errs := make([]error, len(names))
	for i, n := range names {
		errs[i] = skipped[n]
	}
	return errors.Join(errs...)
}

// channelConfig is a store channel in the configuration's terms, before
// defaults.
func channelConfig(c *store.Channel) config.Channel {
	return config.Channel{
		Name: c.Name, Type: c.Type, BaseURL: c.BaseURL, APIKeys: c.APIKeys,
		Models: c.Models, ModelMap: c.ModelMap, Priority: c.Priority, Weight: c.Weight,
		APIVersion: c.APIVersion, RPM: int(c.RPM), TPM: int(c.TPM),
		Timeouts: config.Timeouts{Connect: c.Timeouts.Connect, FirstByte: c.Timeouts.FirstByte,
			Idle: c.Timeouts.Idle, Total: c.Timeouts.Total},
	}
}

// loadChannels reads the store's channels and swaps in a table of the
// configuration's channels and the store's. Concurrent calls are
// serialized. skipped holds the store channels left out, by name (the
// table with the others is in use even so); err is a failure to read the
// store, which leaves the table as it was.
func (g *Gateway) loadChannels(ctx context.Context) (skipped map[string]error, err error) {
	// Read under the lock: a reload that read the store earlier must not
	// install its older list after this one.
	g.rebuild.Lock()
	defer g.rebuild.Unlock()
	list, err := g.store.Channels(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot load channels: %w", err)
	}
	g.channelsSeen = channelsVersion(list)
	specs, disabled, skipped := storeSpecs(list, g.cfg.Channels)
	prev := g.table.Load()
	t, err := g.buildTable(append(g.configSpecs(), specs...), disabled, prev)
	if err != nil {
		return skipped, err
	}
	g.table.Store(t)
	prev.retire(t)
	return skipped, nil
}

// configSpecs are the specs of the configuration file's channels.
func (g *Gateway) configSpecs() []channelSpec {
	specs := make([]channelSpec, len(g.cfg.Channels))
	for i, c := range g.cfg.Channels {
		specs[i].cfg = c
	}
	return specs
}

// channelsVersion sums up what of the store's channels routing depends
// on: which exist and when each last changed.
func channelsVersion(list []store.Channel) string {
	var b []byte
	for i := range list {
		b = strconv.AppendInt(b, list[i].ID, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, list[i].Updated.UnixNano(), 10)
		b = append(b, ',')
	}
	return string(b)
}
