package console

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/store"
)

// Gateway is what the console needs from the running request path. The
// proxy implements it and cmd wires the two together, so that neither
// package imports the other.
type Gateway interface {
	// KeyChanged drops a key from the gateway's caches at once, so that a
	// revoked or edited key takes effect on the next request.
	KeyChanged(hash [sha256.Size]byte)
	// ChannelsChanged reloads the store's channels into routing. skipped
	// holds, by name, the channels it could not use (the others are in
	// use); err is a failure to reload at all.
	ChannelsChanged(ctx context.Context) (skipped map[string]error, err error)
	// Models lists the public models a key may use, with the channels
	// behind each.
	Models(models []string) []Model
	// Channels reports every channel, from the configuration file and the
	// store, with its health.
	Channels() []ChannelStatus
	// ChannelTypes lists the types a channel may have (the styles the
	// gateway speaks, and demo), in the order to offer them.
	ChannelTypes() []string
	// UsageEndpoints lists the endpoints usage rows name (chat,
	// embeddings, images.generations, …), in the order to offer them.
	UsageEndpoints() []string
	// TestChannel sends a tiny request through the named channel and
	// reports how long the reply took, or why it failed, in words. The
	// test counts as one of the channel's requests.
	TestChannel(ctx context.Context, name string) (time.Duration, error)
	// ServeAs runs the gateway's own handler for ctx (a request in any of
	// the three styles, its path and body as a client would send them) as
	// if the key had authenticated it, and returns its upstream attempts.
	// The playground calls it, since the console never holds a key's
	// secret. (A request that had a failed attempt also keeps them in its
	// usage row, store.Usage.Attempts.)
	ServeAs(ctx *fasthttp.RequestCtx, key *store.Key) []store.Attempt
	// Fleet lists the cluster's live nodes, this one first; nil when the
	// gateway is not in a cluster.
	Fleet() []FleetNode
}

// FleetNode is a node of the cluster, as the Channels page shows it.
type FleetNode struct {
	Name        string        `json:"name"`
	Addr        string        `json:"addr"` // its gossip address
	Version     string        `json:"version"`
	OpenStreams int           `json:"open_streams"` // streams and realtime sessions, as it last told
	CountsAge   time.Duration `json:"counts_age"`   // ns since its newest rate-limit count arrived; -1: none lately
	Self        bool          `json:"self"`
}

// Model is one public model name, the channels that serve it and the
// endpoint families they serve ("chat", "embeddings", "images", …).
type Model struct {
	Name      string          `json:"name"`
	Channels  []ChannelStatus `json:"channels"`
	Endpoints []string        `json:"endpoints"`
}

// ChannelStatus is a channel's health as the request path sees it.
type ChannelStatus struct {
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Source      string    `json:"source"` // "config" or "console" (then ID is set)
	ID          int64     `json:"id,omitempty"`
	State       string    `json:"state"`                // "closed" (healthy), "open" (cooling down), "half-open" (probing), "disabled"
	OpenUntil   time.Time `json:"open_until,omitzero"`  // when an open circuit is probed again
	Requests    int64     `json:"requests"`             // since the gateway started, tests included
	ErrorRate   float64   `json:"error_rate"`           // share of failed attempts over the last five minutes, 0..1
	LastError   string    `json:"last_error,omitempty"` // the cause of the last failed attempt, in words
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	RPM         int64     `json:"rpm"` // the channel's own limits for the fleet (the provider's quota); 0: none
	TPM         int64     `json:"tpm"`
}

// Attempt is one upstream attempt of a request as the pages see it: the
// channel, the status it ended with, why it failed (empty when it
// answered), and how long it took.
type Attempt struct {
	Channel    string  `json:"channel"`
	Status     int     `json:"status"`
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// viewAttempts are a request's attempts for the pages; nil for none.
func viewAttempts(list []store.Attempt) []Attempt {
	if len(list) == 0 {
		return nil
	}
	out := make([]Attempt, len(list))
	for i, a := range list {
		out[i] = Attempt{Channel: a.Channel, Status: a.Status, Error: a.Error, DurationMS: ms(a.Duration)}
	}
	return out
}
