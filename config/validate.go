package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/dialects"
)

// problems collects what is wrong with a config, at most one problem per
// field path (so an unset ${VAR} is not also reported as a short key).
type problems struct {
	list []string // "path: problem", or "problem" if no field fits
	seen map[string]bool
}

func (p *problems) add(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path == "" {
		p.list = append(p.list, msg)
		return
	}
	if p.seen[path] {
		return
	}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	p.seen[path] = true
	p.list = append(p.list, path+": "+msg)
}

// err returns the problems as one error, a line per problem, each prefixed
// with source; nil if there are none.
func (p *problems) err(source string) error {
	errs := make([]error, len(p.list))
	for i, s := range p.list {
		errs[i] = errors.New(source + ": " + s)
	}
	return errors.Join(errs...)
}

// validate checks c after defaults are set.
func (c *Config) validate(p *problems) {
	s := &c.Server
	checkHostPort(p, "server.listen", s.Listen)
	checkURL(p, "server.public_url", s.PublicURL)
	if s.MaxBody <= 0 {
		p.add("server.max_body", "must be positive, got %s", s.MaxBody)
	}
	if s.MaxUpload <= 0 {
		p.add("server.max_upload", "must be positive, got %s", s.MaxUpload)
	}
	if s.MaxWSMessage <= 0 {
		p.add("server.max_ws_message", "must be positive, got %s", s.MaxWSMessage)
	}
	if s.ShutdownTimeout <= 0 {
		p.add("server.shutdown_timeout", "must be positive, got %s", s.ShutdownTimeout)
	}
	for i, v := range s.TrustedProxies {
		if _, ok := parsePrefix(v); !ok {
			p.add(fmt.Sprintf("server.trusted_proxies[%d]", i), "%q is not an IP address or CIDR prefix", v)
		}
	}

	switch c.Store.Driver {
	case "sqlite", "postgres":
		if c.Store.DSN == "" {
			p.add("store.dsn", "missing")
		}
	default:
		p.add("store.driver", "unknown driver %q (want sqlite or postgres)", c.Store.Driver)
	}
	if c.Store.UsageFlush <= 0 {
		p.add("store.usage_flush", "must be positive, got %s", c.Store.UsageFlush)
	}
	if c.Store.UsageRetention < time.Hour {
		p.add("store.usage_retention", "must be at least 1h, got %s", c.Store.UsageRetention)
	}
	if c.Store.ResponsesRetention < time.Hour {
		p.add("store.responses_retention", "must be at least 1h, got %s", c.Store.ResponsesRetention)
	}

	names := map[string]int{}
	for i := range c.Channels {
		path := fmt.Sprintf("channels[%d]", i)
		ch := &c.Channels[i]
		if j, ok := names[ch.Name]; ok {
			p.add(path+".name", "%q already used by channels[%d]", ch.Name, j)
		} else if ch.Name != "" {
			names[ch.Name] = i
		}
		ch.validate(p, path)
	}

	names = map[string]int{}
	secrets := map[string]int{}
	for i := range c.Keys {
		path := fmt.Sprintf("keys[%d]", i)
		k := &c.Keys[i]
		if j, ok := names[k.Name]; ok {
			p.add(path+".name", "%q already used by keys[%d]", k.Name, j)
		} else if k.Name != "" {
			names[k.Name] = i
		}
		if j, ok := secrets[k.Key]; ok {
			p.add(path+".key", "same secret as keys[%d]", j)
		} else if k.Key != "" {
			secrets[k.Key] = i
		}
		k.validate(p, path)
	}

	cl := &c.Cluster
	if cl.NodeName == "" {
		p.add("cluster.node_name", "missing")
	}
	checkHostPort(p, "cluster.bind", cl.Bind)
	if cl.Advertise != "" {
		checkHostPort(p, "cluster.advertise", cl.Advertise)
	}
	for i, addr := range cl.Join {
		if addr == "" {
			p.add(fmt.Sprintf("cluster.join[%d]", i), "empty")
		}
	}
	if cl.SecretKeyEnv == "" {
		p.add("cluster.secret_key_env", "missing")
	}
	if cl.Window < time.Second {
		p.add("cluster.window", "must be at least 1s, got %s", cl.Window)
	}
}

// checkLimits checks per-minute limits at path (path.rpm, path.tpm).
func checkLimits(p *problems, path string, rpm, tpm int) {
	if rpm < 0 {
		p.add(path+".rpm", "must not be negative, got %d", rpm)
	}
	if tpm < 0 {
		p.add(path+".tpm", "must not be negative, got %d", tpm)
	}
}

func (ch *Channel) validate(p *problems, path string) {
	if ch.Name == "" {
		p.add(path+".name", "missing")
	}
	style := styleHTTP(ch.Type)
	switch {
	case ch.Type == "":
		p.add(path+".type", "missing (want %s)", orList(channelTypes()))
	case ch.Type == demoType:
		if ch.BaseURL != "" {
			p.add(path+".base_url", "not used by demo channels")
		}
	case style == nil:
		p.add(path+".type", "unknown type %q (want %s)", ch.Type, orList(channelTypes()))
	default:
		checkURL(p, path+".base_url", ch.BaseURL)
		switch {
		case len(ch.APIKeys) > 0:
		case style.KeyEnv != "":
			p.add(path+".api_keys", "missing (set api_keys or %s)", style.KeyEnv)
		default:
			p.add(path+".api_keys", "missing")
		}
	}
	for i, k := range ch.APIKeys {
		if k == "" {
			p.add(fmt.Sprintf("%s.api_keys[%d]", path, i), "empty")
		}
	}

	if len(ch.Models) == 0 && len(ch.ModelMap) == 0 {
		p.add(path+".models", "missing (list models or model_map)")
	}
	for i, m := range ch.Models {
		if m == "" {
			p.add(fmt.Sprintf("%s.models[%d]", path, i), "empty")
		}
	}
	for _, public := range slices.Sorted(maps.Keys(ch.ModelMap)) {
		if public == "" {
			p.add(path+".model_map", "empty public name")
		} else if ch.ModelMap[public] == "" {
			p.add(field(path+".model_map", public), "empty upstream name")
		}
	}

	ch.validateEndpoints(p, path)
	ch.validateResponses(p, path)

	if ch.Priority < 0 {
		p.add(path+".priority", "must not be negative, got %d", ch.Priority)
	}
	if ch.Weight < 1 {
		p.add(path+".weight", "must be at least 1, got %d", ch.Weight)
	}
	if ch.APIVersion != "" && (style == nil || style.VersionHeader == "") {
		if v := versionedTypes(); len(v) > 0 {
			p.add(path+".api_version", "only used by %s channels", orList(v))
		} else {
			p.add(path+".api_version", "not used by any channel type")
		}
	}
	for _, to := range []struct {
		name string
		d    time.Duration
	}{
		{"connect", ch.Timeouts.Connect}, {"first_byte", ch.Timeouts.FirstByte},
		{"idle", ch.Timeouts.Idle}, {"total", ch.Timeouts.Total},
	} {
		if to.d <= 0 {
			p.add(path+".timeouts."+to.name, "must be positive, got %s", to.d)
		}
	}
	checkLimits(p, path, ch.RPM, ch.TPM)
	if ch.Breaker.Failures < 1 {
		p.add(path+".breaker.failures", "must be at least 1, got %d", ch.Breaker.Failures)
	}
	if ch.Breaker.Cooldown <= 0 {
		p.add(path+".breaker.cooldown", "must be positive, got %s", ch.Breaker.Cooldown)
	}
	switch {
	case ch.Pace != 0 && ch.Type != demoType:
		p.add(path+".pace", "only used by demo channels")
	case ch.Pace < 0:
		p.add(path+".pace", "must be positive, got %s", ch.Pace)
	}
}

func (k *Key) validate(p *problems, path string) {
	if k.Name == "" {
		p.add(path+".name", "missing")
	}
	switch {
	case k.Key == "":
		p.add(path+".key", "missing")
	case len(k.Key) < 16:
		p.add(path+".key", "too short: %d characters, want at least 16", len(k.Key))
	}
	for i, m := range k.Models {
		if m == "" {
			p.add(fmt.Sprintf("%s.models[%d]", path, i), "empty")
		} else if strings.Contains(m[:len(m)-1], "*") {
			p.add(fmt.Sprintf("%s.models[%d]", path, i), `%q: "*" may only end a pattern`, m)
		}
	}
	checkLimits(p, path, k.RPM, k.TPM)
	for _, model := range slices.Sorted(maps.Keys(k.ModelLimits)) {
		if model == "" {
			p.add(path+".model_limits", "empty model name")
			continue
		}
		lim := k.ModelLimits[model]
		checkLimits(p, field(path+".model_limits", model), lim.RPM, lim.TPM)
	}
}

// validateEndpoints checks that every endpoint family named is one the
// channel's type serves, once.
func (ch *Channel) validateEndpoints(p *problems, path string) {
	served := ServedEndpoints(ch.Type)
	if served == nil {
		return // the type is wrong: said already
	}
	for i, e := range ch.Endpoints {
		at := fmt.Sprintf("%s.endpoints[%d]", path, i)
		switch {
		case !slices.Contains(codec.Endpoints(), e):
			p.add(at, "unknown endpoint %q (want %s)", e, orList(codec.Endpoints()))
		case !slices.Contains(served, e):
			p.add(at, "%s channels do not serve %s (they serve %s)", ch.Type, e, andList(served))
		case slices.Index(ch.Endpoints, e) < i:
			p.add(at, "%q listed twice", e)
		}
	}
}

// validateResponses checks how the channel serves the Responses API.
func (ch *Channel) validateResponses(p *problems, path string) {
	switch {
	case ch.Responses == "" || ServedEndpoints(ch.Type) == nil:
	case !slices.Contains(ServedEndpoints(ch.Type), responsesFamily):
		p.add(path+".responses", "%s channels do not serve the Responses API", ch.Type)
	case ch.Responses != ResponsesNative && ch.Responses != ResponsesTranslate:
		p.add(path+".responses", "unknown value %q (want native or translate)", ch.Responses)
	case ch.Responses == ResponsesNative && !servesResponsesNatively(ch.Type):
		p.add(path+".responses", "%s channels serve the Responses API by translation only (want translate)", ch.Type)
	}
}

// versionedTypes lists the channel types whose API has versions (an
// api_version to send upstream).
func versionedTypes() []string {
	var types []string
	for _, d := range dialects.All {
		if d.HTTP().VersionHeader != "" {
			types = append(types, d.Name())
		}
	}
	return types
}

// orList writes a list of names as prose: "a", "a or b", "a, b or c".
func orList(names []string) string { return proseList(names, " or ") }

// andList writes a list of names as prose: "a", "a and b", "a, b and c".
func andList(names []string) string { return proseList(names, " and ") }

func proseList(names []string, last string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

// checkHostPort checks that addr is host:port with a numeric port; the host
// may be empty (all interfaces).
func checkHostPort(p *problems, path, addr string) {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		p.add(path, "%q is not host:port (e.g. 127.0.0.1:8080)", addr)
	}
}

// checkURL checks that s is an absolute http or https URL.
func checkURL(p *problems, path, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(path, "%q is not an absolute http(s) URL", s)
	}
}

// field appends a mapping key to a path: "a.b", or `a["b.c"]` when the key
// is not a plain word (model names often hold dots).
func field(path, key string) string {
	plain := key != "" && strings.IndexFunc(key, func(r rune) bool {
		return r != '_' && r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) < 0
	switch {
	case !plain:
		return fmt.Sprintf("%s[%q]", path, key)
	case path == "":
		return key
	default:
		return path + "." + key
	}
}
