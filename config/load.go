package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/dialects"
)

// Defaults not visible elsewhere; the field docs in config.go state them all.
const (
	defaultListen       = "127.0.0.1:8080"
	defaultMaxBody      = 32 << 20
	defaultMaxUpload    = 100 << 20
	defaultMaxWSMessage = 16 << 20
	defaultDSN          = "rosetta.db"
	defaultPace         = 40 * time.Millisecond
	defaultBind         = "0.0.0.0:7946"
	defaultSecretEnv    = "ROSETTA_GOSSIP_KEY"
)

// demoType is the type of the demo channel: a simulated OpenAI-compatible
// model inside the gateway, with no upstream, key or style of its own.
const demoType = "demo"

// channelTypes lists the types a channel may have: the styles of
// codec/dialects by name, then demo.
func channelTypes() []string { return append(dialects.Names(), demoType) }

// styleHTTP is the HTTP facts of the style a channel of type typ speaks;
// nil for demo and for unknown types.
func styleHTTP(typ string) *codec.HTTP {
	if d := dialects.Named(typ); d != nil {
		return d.HTTP()
	}
	return nil
}

// ServedEndpoints lists the endpoint families a channel of type typ can
// serve (codec.Op.Endpoint); nil for unknown types. A demo channel
// simulates an OpenAI-compatible upstream.
// Every type that serves chat serves responses, translated if not natively.
func ServedEndpoints(typ string) []string {
	if typ == demoType {
		typ = dialects.All[0].Name()
	}
	d := dialects.Named(typ)
	if d == nil {
		return nil
	}
	list := codec.ServedEndpoints(d)
	if slices.Contains(list, codec.OpGenerate.Endpoint()) && !slices.Contains(list, responsesFamily) {
		list = append(list, responsesFamily)
	}
	return list
}

// The ways a channel serves the Responses API (Channel.Responses).
const (
	responsesFamily    = "responses"
	ResponsesNative    = "native"
	ResponsesTranslate = "translate"
)

// servesResponsesNatively reports whether a channel of type typ can relay
// the Responses API to its upstream as it is: its style has the API, and
// it has a real upstream (the demo's simulates chat only).
func servesResponsesNatively(typ string) bool {
	d := dialects.Named(typ)
	return typ != demoType && d != nil && codec.Serves(d, codec.OpResponses)
}

// Load reads the file at path and parses it with Parse, taking the
// environment from os.Getenv.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read config: %w", err)
	}
	return Parse(data, path, os.Getenv)
}

// Parse decodes a config file, rejecting unknown fields, applies the
// environment (env looks a variable up, "" if unset; nil means none is set),
// fills defaults and validates. Errors name source, the field and the
// problem, all problems at once, one per line.
func Parse(data []byte, source string, env func(string) string) (*Config, error) {
	c := &Config{Source: source}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p problems
	if err := dec.Decode(c); err != nil && err != io.EOF { // io.EOF: an empty file
		var te *yaml.TypeError
		if !errors.As(err, &te) { // a syntax error, "yaml: line 3: ...": nothing decoded
			return nil, fmt.Errorf("%s: %s", c.name(), strings.TrimPrefix(err.Error(), "yaml: "))
		}
		// The decoder went on past type errors: report them with the rest.
		p.addTypeErrors(data, te.Errors)
	}
	c.applyEnv(env, &p)
	c.setDefaults()
	c.validate(&p)
	if err := p.err(c.name()); err != nil {
		return nil, err
	}
	return c, nil
}

// Default returns the config used when no file is given: a server on
// 127.0.0.1:8080 with one demo channel serving the model "demo", and no keys
// (the caller makes one). The environment is applied as in Parse.
func Default(env func(string) string) *Config {
	c := &Config{Channels: []Channel{{Name: "demo", Type: demoType, Models: []string{"demo"}}}}
	c.applyEnv(env, new(problems)) // nothing to expand
	c.setDefaults()
	return c
}

// Validate reports what is wrong with c, in the format of Parse. Parse and
// Load validate already; use it for a config from Default or built in code.
func (c *Config) Validate() error {
	var p problems
	c.validate(&p)
	return p.err(c.name())
}

// name is how errors refer to the config.
func (c *Config) name() string {
	if c.Source == "" {
		return "default config"
	}
	return c.Source
}

// applyEnv applies environment overrides and expands ${VAR} in secrets.
func (c *Config) applyEnv(env func(string) string, p *problems) {
	if env == nil {
		env = func(string) string { return "" }
	}
	if v := env("ROSETTA_LISTEN"); v != "" {
		c.Server.Listen = v
	}
	c.Store.DSN = p.expand("store.dsn", c.Store.DSN, env)
	for i := range c.Channels {
		ch := &c.Channels[i]
		if len(ch.APIKeys) == 0 {
			if h := styleHTTP(ch.Type); h != nil && h.KeyEnv != "" {
				ch.APIKeys = splitList(env(h.KeyEnv))
			}
			continue
		}
		for j, k := range ch.APIKeys {
			ch.APIKeys[j] = p.expand(fmt.Sprintf("channels[%d].api_keys[%d]", i, j), k, env)
		}
	}
	for i := range c.Keys {
		c.Keys[i].Key = p.expand(fmt.Sprintf("keys[%d].key", i), c.Keys[i].Key, env)
	}
}

// expand replaces each ${VAR} in s with its value from env. A variable that
// is unset or empty is a problem at path. Errors never quote s: it is secret.
func (p *problems) expand(path, s string, env func(string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		n := strings.IndexByte(s[i:], '}')
		if n < 0 {
			p.add(path, `unclosed "${"`)
			return s
		}
		name := s[i+2 : i+n]
		v := env(name)
		if v == "" {
			p.add(path, "${%s} is not set", name)
			return s
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+n+1:]
	}
	b.WriteString(s)
	return b.String()
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var list []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			list = append(list, v)
		}
	}
	return list
}

// defaultUsageRetention keeps 90 days of usage rows: enough for a
// quarter's review, bounded so an edge node's SQLite file does not grow
// without end.
const defaultUsageRetention = 90 * 24 * time.Hour

// defaultResponsesRetention is as long as OpenAI keeps a response.
const defaultResponsesRetention = 30 * 24 * time.Hour

// setDefaults fills every field left unset (zero). It runs after applyEnv,
// so derived defaults such as PublicURL follow ROSETTA_LISTEN.
func (c *Config) setDefaults() {
	s := &c.Server
	setDefault(&s.Listen, defaultListen)
	setDefault(&s.PublicURL, publicURL(s.Listen))
	s.PublicURL = strings.TrimSuffix(s.PublicURL, "/")
	setDefault(&s.MaxBody, defaultMaxBody)
	setDefault(&s.MaxUpload, defaultMaxUpload)
	setDefault(&s.MaxWSMessage, defaultMaxWSMessage)
	setDefault(&s.ShutdownTimeout, 30*time.Second)

	setDefault(&c.Store.Driver, "sqlite")
	setDefault(&c.Store.UsageFlush, time.Second)
	setDefault(&c.Store.UsageRetention, defaultUsageRetention)
	setDefault(&c.Store.ResponsesRetention, defaultResponsesRetention)
	if c.Store.Driver == "sqlite" {
		setDefault(&c.Store.DSN, defaultDSN)
	}

	for i := range c.Channels {
		c.Channels[i].setDefaults()
	}

	for i := range c.Keys {
		if len(c.Keys[i].Models) == 0 {
			c.Keys[i].Models = []string{"*"}
		}
	}

	cl := &c.Cluster
	setDefault(&cl.NodeName, nodeName(s.Listen))
	setDefault(&cl.Bind, defaultBind)
	setDefault(&cl.SecretKeyEnv, defaultSecretEnv)
	setDefault(&cl.Window, time.Minute)
}

func (ch *Channel) setDefaults() {
	if h := styleHTTP(ch.Type); h != nil {
		setDefault(&ch.BaseURL, h.BaseURL)
		if h.VersionHeader != "" {
			setDefault(&ch.APIVersion, h.DefaultVersion)
		}
	}
	ch.BaseURL = strings.TrimSuffix(ch.BaseURL, "/")
	if servesResponsesNatively(ch.Type) {
		setDefault(&ch.Responses, ResponsesNative)
	} else if slices.Contains(ServedEndpoints(ch.Type), responsesFamily) {
		setDefault(&ch.Responses, ResponsesTranslate)
	}
	setDefault(&ch.Weight, 1)
	if ch.Type == demoType {
		setDefault(&ch.Pace, defaultPace)
	}
	t := &ch.Timeouts
	setDefault(&t.Connect, 5*time.Second)
	setDefault(&t.FirstByte, 60*time.Second)
	setDefault(&t.Idle, 60*time.Second)
	setDefault(&t.Total, 10*time.Minute)
	setDefault(&ch.Breaker.Failures, 5)
	setDefault(&ch.Breaker.Cooldown, 30*time.Second)
}

// Complete prepares a channel that does not come from the file (one made
// in the console): it fills the unset fields with the defaults Load
// applies, environment keys excepted, and validates the result. Errors name
// the channel and the field, one per line: `channel "x": base_url: ...`.
func (ch *Channel) Complete() error {
	ch.setDefaults()
	var p problems
	ch.validate(&p, "")
	for i, s := range p.list {
		p.list[i] = strings.TrimPrefix(s, ".") // fields of no parent: "base_url", not ".base_url"
	}
	return p.err(fmt.Sprintf("channel %q", ch.Name))
}

// setDefault sets *v to def if *v is the zero value.
func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// publicURL derives the public URL from the listen address, naming
// localhost when the host is empty or unspecified (":8080", "0.0.0.0:8080").
func publicURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen // validate reports the listen address
	}
	if host == "" || net.ParseIP(host).IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// nodeName is the hostname and the listen port, e.g. "gw1-8080".
func nodeName(listen string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "rosetta"
	}
	if _, port, err := net.SplitHostPort(listen); err == nil && port != "" {
		host += "-" + port
	}
	return host
}
