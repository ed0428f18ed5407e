// Package config reads Rosetta's YAML configuration file.
//
// Load and Parse run four steps: strict decoding (an unknown field is an
// error), environment overrides and ${VAR} expansion, defaults, and
// validation. Every problem is reported at once, one per line, as
//
//	<file>: <field path>: <what is wrong>
//
// for example `rosetta.yaml: channels[1].type: unknown type "foo" (want
// openai, anthropic, gemini or demo)`. Every field has a default, so an empty
// file is a valid config.
package config

import (
	"net/netip"
	"slices"
	"time"
)

// Config is the whole configuration file.
type Config struct {
	// Server configures the HTTP listener.
	Server Server `yaml:"server"`

	// Store selects where users, console keys and usage are kept.
	// Default: SQLite in rosetta.db.
	Store Store `yaml:"store"`

	// Channels are the upstream providers. Channels made in the console
	// live in the store and add to these. Default: none.
	Channels []Channel `yaml:"channels"`

	// Keys are static gateway keys. Console keys live in the store.
	// Default: none.
	Keys []Key `yaml:"keys"`

	// Cluster configures gossip between nodes. Default: disabled.
	Cluster Cluster `yaml:"cluster"`

	// Source is the file the config was read from, "" for Default.
	Source string `yaml:"-"`
}

// Server configures the HTTP listener.
type Server struct {
	// Listen is the host:port to serve on.
	// Default: 127.0.0.1:8080. The ROSETTA_LISTEN environment variable
	// overrides it.
	Listen string `yaml:"listen"`

	// PublicURL is the address clients use, shown in the console.
	// Default: "http://" + Listen, with localhost for an empty or
	// unspecified host. A trailing slash is dropped.
	PublicURL string `yaml:"public_url"`

	// MaxBody is the largest request body accepted but on the upload
	// endpoints (MaxUpload); larger ones get 413.
	// Default: 32MiB (Anthropic's own limit).
	MaxBody ByteSize `yaml:"max_body"`

	// MaxUpload is the largest body accepted on the upload endpoints
	// (POST /v1/images/edits, /v1/images/variations,
	// /v1/audio/transcriptions, /v1/audio/translations), which MaxBody
	// does not bound; larger ones get 413. An upload is held in memory
	// up to 256 KiB, the rest in a temporary file in $TMPDIR while it is
	// relayed, so TMPDIR needs room for the uploads in flight.
	// Default: 100MiB (OpenAI's own audio limit is 25 MB).
	MaxUpload ByteSize `yaml:"max_upload"`

	// MaxWSMessage is the largest WebSocket message a realtime session
	// relays, either way; a larger one closes the session with 1009.
	// Default: 16MiB.
	MaxWSMessage ByteSize `yaml:"max_ws_message"`

	// ShutdownTimeout is how long in-flight requests, streams and realtime
	// sessions may run after SIGTERM (sessions still open then are closed
	// with 1001). Default: 30s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`

	// TrustedProxies are the addresses (IPs or CIDR prefixes) of reverse
	// proxies in front of the gateway whose X-Forwarded-For is believed,
	// so that per-client limits such as the console's login limit see the
	// client, not the proxy. Default: none (the peer address is the client).
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// TrustedPrefixes returns TrustedProxies parsed (validation has refused
// entries that do not parse).
func (s *Server) TrustedPrefixes() []netip.Prefix {
	var list []netip.Prefix
	for _, v := range s.TrustedProxies {
		if p, ok := parsePrefix(v); ok {
			list = append(list, p)
		}
	}
	return list
}

// parsePrefix reads a CIDR prefix, or an IP address as a prefix of one
// address.
func parsePrefix(v string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(v)
	return netip.PrefixFrom(a, a.BitLen()), err == nil
}

// Store selects the persistence backend.
type Store struct {
	// Driver is sqlite or postgres. Default: sqlite.
	Driver string `yaml:"driver"`

	// DSN is the SQLite file or the PostgreSQL connection string; ${VAR}
	// is expanded from the environment. Default for sqlite: rosetta.db,
	// relative to the working directory. Required for postgres.
	DSN string `yaml:"dsn"`

	// UsageFlush is the longest a usage row waits in memory before it is
	// written (rows are written in batches; all are written at shutdown).
	// Larger values make fewer, bigger writes. Default: 1s.
	UsageFlush time.Duration `yaml:"usage_flush"`

	// UsageRetention is how long usage rows are kept; older ones are
	// deleted at start and every hour. Default: 2160h (90 days).
	UsageRetention time.Duration `yaml:"usage_retention"`

	// ResponsesRetention is how long the gateway remembers a Responses
	// API response: which channel made a native one (so that its GET,
	// DELETE, cancel, input_items and previous_response_id reach it), and
	// the items of a translated one. Older ones are deleted at start and
	// every hour, as they are when their key is. Default: 720h (30 days,
	// as long as OpenAI keeps responses).
	ResponsesRetention time.Duration `yaml:"responses_retention"`
}

// Channel is one upstream provider account.
type Channel struct {
	// Name identifies the channel in logs, metrics and the console.
	// Required and unique.
	Name string `yaml:"name"`

	// Type is the upstream's API style, one of codec/dialects by name:
	// openai (and OpenAI-compatible services), anthropic, gemini, cohere
	// (rerank only); or demo (a built-in echo model that needs no
	// network). Required.
	Type string `yaml:"type"`

	// BaseURL is the upstream address as the provider's own SDK spells it.
	// Default: the style's codec.HTTP.BaseURL (https://api.openai.com/v1,
	// https://api.anthropic.com, https://generativelanguage.googleapis.com,
	// https://api.cohere.com).
	// Not used by demo channels. A trailing slash is dropped.
	BaseURL string `yaml:"base_url"`

	// APIKeys are the upstream keys, used in rotation; ${VAR} is expanded
	// from the environment. Default: the variable named by the style's
	// codec.HTTP.KeyEnv (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY,
	// COHERE_API_KEY), comma-separated. Required except for demo.
	APIKeys []string `yaml:"api_keys"`

	// Models are upstream model names served under their own names.
	// A channel needs at least one entry here or in ModelMap.
	Models []string `yaml:"models"`

	// ModelMap maps public model names to upstream names. An upstream name
	// that is a target here is no longer served under its own name.
	// Default: none.
	ModelMap map[string]string `yaml:"model_map"`

	// Priority orders channels for a model: lower is tried first.
	// Default: 0.
	Priority int `yaml:"priority"`

	// Weight is the channel's share of traffic among channels of equal
	// priority. Default: 1.
	Weight int `yaml:"weight"`

	// APIVersion is the API version sent upstream (the style's
	// codec.HTTP.VersionHeader: anthropic-version). Only for styles with
	// versions (anthropic). Default: the style's DefaultVersion, 2023-06-01.
	APIVersion string `yaml:"api_version"`

	// Endpoints narrows what the channel serves for its models to these
	// endpoint families: chat (chat completions, messages,
	// generateContent, token counts), completions (the legacy text
	// completions), embeddings (OpenAI's /embeddings, Gemini's
	// embedContent and batchEmbedContents), rerank, images (generations,
	// edits, variations), audio (speech, transcriptions, translations),
	// realtime (GET /v1/realtime WebSocket sessions), responses (the
	// Responses API, as Responses says). A family names what clients may
	// call on the channel, whatever API the gateway calls upstream:
	// responses lets the channel serve the Responses API natively or
	// translated through its chat API, listed with chat or not; chat
	// alone lets it serve no Responses request.
	// Default: every family its type serves (openai and demo: all; gemini:
	// chat, embeddings and responses; anthropic: chat and responses;
	// cohere: rerank).
	Endpoints []string `yaml:"endpoints"`

	// Responses is how the channel serves the Responses API (POST
	// /v1/responses, and GET, DELETE, cancel and input_items on a
	// response): native relays it to the upstream's own /responses, as it
	// is but for the model name, and the upstream keeps the responses
	// (the gateway remembers which channel, and which of its keys, made
	// each); translate serves it through the channel's chat API (through
	// the canonical model), and the gateway keeps the responses in its
	// store. native is for openai channels whose server has /responses
	// (OpenAI's does; many OpenAI-compatible servers do not: set
	// translate for those). A native channel still translates what
	// cannot go to its /responses as it is (the continuation of a
	// response the gateway keeps). A model served both ways is served in
	// its channels' order, failing over from one way to the other.
	// Default: native for openai channels, translate for anthropic,
	// gemini and demo ones.
	Responses string `yaml:"responses"`

	// Timeouts bound each upstream request.
	Timeouts Timeouts `yaml:"timeouts"`

	// Breaker takes the channel out of rotation after repeated failures.
	Breaker Breaker `yaml:"breaker"`

	// RPM and TPM are the upstream's quota for the whole fleet (requests
	// and tokens per minute, counted on every node, shared by gossip in a
	// cluster): a channel at its limit is passed over in routing, as if it
	// were not there, so the fleet does not earn the provider's 429s.
	// Default: 0, unlimited.
	RPM int `yaml:"rpm"`
	TPM int `yaml:"tpm"`

	// Pace is the delay between streamed words (and speech chunks).
	// Demo channels only.
	// Default: 40ms.
	Pace time.Duration `yaml:"pace"`
}

// Timeouts bound an upstream request. A client disconnect cancels it sooner.
type Timeouts struct {
	// Connect bounds dialing and the TLS handshake. Default: 5s.
	Connect time.Duration `yaml:"connect"`

	// FirstByte bounds the wait for the upstream's first response byte
	// after the request is sent. Default: 60s.
	FirstByte time.Duration `yaml:"first_byte"`

	// Idle bounds the gap between stream events, and a realtime session's
	// time without a message either way. Default: 60s.
	Idle time.Duration `yaml:"idle"`

	// Total bounds the whole request, stream included, and a realtime
	// session's length (OpenAI's own limit is 60m). Default: 10m.
	Total time.Duration `yaml:"total"`
}

// Breaker configures a channel's circuit breaker.
type Breaker struct {
	// Failures is how many consecutive failures open the breaker.
	// Default: 5.
	Failures int `yaml:"failures"`

	// Cooldown is how long an open breaker keeps the channel out of
	// rotation before it is tried again. Default: 30s.
	Cooldown time.Duration `yaml:"cooldown"`
}

// Key is a static gateway key, the secret clients send to Rosetta.
type Key struct {
	// Name identifies the key in logs, usage and the console.
	// Required and unique.
	Name string `yaml:"name"`

	// Key is the secret, at least 16 characters; ${VAR} is expanded from
	// the environment. Required and unique.
	Key string `yaml:"key"`

	// Models is the allow-list of public model names: exact names, "*",
	// or prefixes ending in "*" ("gpt-4o*"). Default: ["*"].
	Models []string `yaml:"models"`

	// RPM limits requests per minute across the cluster.
	// Default: 0, unlimited.
	RPM int `yaml:"rpm"`

	// TPM limits tokens per minute across the cluster.
	// Default: 0, unlimited.
	TPM int `yaml:"tpm"`

	// ModelLimits are limits of the key on one public model, beside RPM
	// and TPM ({model: {rpm, tpm}}), across the cluster. Default: none.
	ModelLimits map[string]Limits `yaml:"model_limits"`
}

// Limits are per-minute limits; 0 is unlimited.
type Limits struct {
	RPM int `yaml:"rpm"`
	TPM int `yaml:"tpm"`
}

// Cluster configures memberlist gossip between gateway nodes.
type Cluster struct {
	// Enabled turns gossip on. Default: false, a single node.
	Enabled bool `yaml:"enabled"`

	// NodeName is unique per node. Default: the hostname and the listen
	// port ("gw1-8080").
	NodeName string `yaml:"node_name"`

	// Bind is the host:port gossip listens on. Default: 0.0.0.0:7946.
	Bind string `yaml:"bind"`

	// Advertise is the host:port other nodes reach this one at.
	// Default: "", meaning the bind address; the cluster package picks a
	// private address when the bind host is unspecified.
	Advertise string `yaml:"advertise"`

	// Join lists addresses, or a DNS name such as a Kubernetes headless
	// service, of nodes to join at start. Default: none.
	Join []string `yaml:"join"`

	// SecretKeyEnv names the environment variable holding the gossip
	// encryption key: 16, 24 or 32 bytes, or their base64 (`openssl rand
	// -base64 32`). Required when Enabled: a node with another key cannot
	// join. Default: ROSETTA_GOSSIP_KEY.
	SecretKeyEnv string `yaml:"secret_key_env"`

	// Window is the length of the rate-limit windows, the same on every
	// node; rpm and tpm limits are prorated to it (600 rpm is 100 requests
	// a 10s window). Shorter windows smooth bursts; every node gossips the
	// counts of the current and the previous window. At least 1s.
	// It applies to a single node too. Default: 1m.
	Window time.Duration `yaml:"window"`
}

// PublicModels returns the model names clients may ask this channel for,
// sorted and without duplicates: every ModelMap key, plus the Models that
// are not the target of a ModelMap entry.
func (c *Channel) PublicModels() []string {
	targets := make(map[string]bool, len(c.ModelMap))
	for _, upstream := range c.ModelMap {
		targets[upstream] = true
	}
	var names []string
	for _, m := range c.Models {
		if !targets[m] {
			names = append(names, m)
		}
	}
	for public := range c.ModelMap {
		names = append(names, public)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// UpstreamModel returns the upstream name of a public model name, and
// whether the channel serves that name at all (see PublicModels). It scans
// the channel; the request path should index channels once instead.
func (c *Channel) UpstreamModel(public string) (string, bool) {
	if upstream, ok := c.ModelMap[public]; ok {
		return upstream, true
	}
	if !slices.Contains(c.Models, public) {
		return "", false
	}
	for _, upstream := range c.ModelMap {
		if upstream == public {
			return "", false
		}
	}
	return public, true
}
