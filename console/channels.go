package console

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

type timeoutsView struct {
	Connect   string `json:"connect,omitempty"`
	FirstByte string `json:"first_byte,omitempty"`
	Idle      string `json:"idle,omitempty"`
	Total     string `json:"total,omitempty"`
}

// channelView is a channel's health joined, for console channels, with
// its settings from the store. Upstream API keys are never sent back,
// only their number and last four characters.
type channelView struct {
	ChannelStatus
	BaseURL    string            `json:"base_url,omitempty"`
	APIKeys    []string          `json:"api_keys,omitempty"` // masked
	Models     []string          `json:"models,omitempty"`
	ModelMap   map[string]string `json:"model_map,omitempty"`
	Priority   int               `json:"priority"`
	Weight     int               `json:"weight"`
	APIVersion string            `json:"api_version,omitempty"`
	Timeouts   *timeoutsView     `json:"timeouts,omitempty"`
	Enabled    bool              `json:"enabled"`
	Editable   bool              `json:"editable"`             // made in the console, so it can be edited here
	KeysError  string            `json:"keys_error,omitempty"` // the stored API keys cannot be read; give them again
	Updated    *time.Time        `json:"updated,omitempty"`
}

func maskSecret(s string) string {
	if len(s) <= 8 {
		return "…"
	}
	return "…" + s[len(s)-4:]
}

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func viewChannel(st ChannelStatus, ch *store.Channel) channelView {
	v := channelView{ChannelStatus: st, Enabled: st.State != "disabled"}
	if ch == nil {
		return v
	}
	v.ID, v.Source, v.Type = ch.ID, "console", ch.Type
	v.BaseURL, v.Models, v.ModelMap = ch.BaseURL, ch.Models, ch.ModelMap
	v.Priority, v.Weight, v.APIVersion, v.Enabled, v.Editable = ch.Priority, ch.Weight, ch.APIVersion, ch.Enabled, true
	v.RPM, v.TPM = ch.RPM, ch.TPM // what is stored, whether routed or not
	for _, k := range ch.APIKeys {
		v.APIKeys = append(v.APIKeys, maskSecret(k))
	}
	if ch.KeysErr != nil {
		v.KeysError = ch.KeysErr.Error()
	}
	t := ch.Timeouts
	v.Timeouts = &timeoutsView{durationText(t.Connect), durationText(t.FirstByte), durationText(t.Idle), durationText(t.Total)}
	v.Updated = timeOrNil(ch.Updated)
	if !ch.Enabled {
		v.State = "disabled"
	}
	return v
}

func (c *Console) listChannels(cl *call) error {
	stored, err := c.st.Channels(cl.ctx)
	if err != nil {
		return err
	}
	byName := make(map[string]*store.Channel, len(stored))
	for i := range stored {
		byName[stored[i].Name] = &stored[i]
	}
	// The gateway's status does not say what a channel of the
	// configuration file serves; its model table does.
	served := map[string][]string{}
	for _, m := range c.gw.Models([]string{"*"}) {
		for _, ch := range m.Channels {
			served[ch.Name] = append(served[ch.Name], m.Name)
		}
	}
	var views []channelView
	for _, st := range c.gw.Channels() {
		v := viewChannel(st, byName[st.Name])
		if !v.Editable {
			v.Models = served[st.Name]
		}
		views = append(views, v)
		delete(byName, st.Name)
	}
	// Console channels the gateway does not route (disabled ones, or ones
	// it failed to load) are still listed, so they can be fixed.
	for i := range stored {
		if ch := byName[stored[i].Name]; ch != nil {
			views = append(views, viewChannel(ChannelStatus{Name: ch.Name, State: "disabled"}, ch))
		}
	}
	if views == nil {
		views = []channelView{}
	}
	// The types the gateway takes come along, for the channel form.
	// In a cluster, the fleet comes along too: the nodes serving them.
	return cl.reply(map[string]any{"channels": views, "types": c.gw.ChannelTypes(), "fleet": c.gw.Fleet()})
}

type timeoutsInput struct {
	Connect   *string `json:"connect"`
	FirstByte *string `json:"first_byte"`
	Idle      *string `json:"idle"`
	Total     *string `json:"total"`
}

// channelInput is the channels form; on edit, absent fields stay as they
// are (so an edit need not resend the upstream keys).
type channelInput struct {
	Name       *string            `json:"name"`
	Type       *string            `json:"type"`
	BaseURL    *string            `json:"base_url"`
	APIKeys    *[]string          `json:"api_keys"`
	Models     *[]string          `json:"models"`
	ModelMap   *map[string]string `json:"model_map"`
	Priority   *int               `json:"priority"`
	Weight     *int               `json:"weight"`
	APIVersion *string            `json:"api_version"`
	Timeouts   *timeoutsInput     `json:"timeouts"`
	RPM        *int64             `json:"rpm"`
	TPM        *int64             `json:"tpm"`
	Enabled    *bool              `json:"enabled"`
}

// apply copies the fields given onto ch; check then validates the whole.
func (in *channelInput) apply(ch *store.Channel) error {
	setIf(in.Name, &ch.Name)
	setIf(in.Type, &ch.Type)
	setIf(in.BaseURL, &ch.BaseURL)
	if in.APIKeys != nil {
		ch.APIKeys, ch.KeysErr = *in.APIKeys, nil // new keys replace unreadable ones
	}
	setIf(in.Models, &ch.Models)
	setIf(in.ModelMap, &ch.ModelMap)
	setIf(in.Priority, &ch.Priority)
	setIf(in.Weight, &ch.Weight)
	setIf(in.APIVersion, &ch.APIVersion)
	setIf(in.Enabled, &ch.Enabled)
	if err := setLimits(in.RPM, in.TPM, &ch.RPM, &ch.TPM); err != nil {
		return err
	}
	if t := in.Timeouts; t != nil {
		for _, f := range []struct {
			name string
			in   *string
			out  *time.Duration
		}{
			{"timeouts.connect", t.Connect, &ch.Timeouts.Connect},
			{"timeouts.first_byte", t.FirstByte, &ch.Timeouts.FirstByte},
			{"timeouts.idle", t.Idle, &ch.Timeouts.Idle},
			{"timeouts.total", t.Total, &ch.Timeouts.Total},
		} {
			if err := parseTimeout(f.name, f.in, f.out); err != nil {
				return err
			}
		}
	}
	return nil
}

func setIf[T any](in *T, out *T) {
	if in != nil {
		*out = *in
	}
}

// parseTimeout reads a Go duration ("30s"); "" means the gateway default.
func parseTimeout(field string, in *string, out *time.Duration) error {
	if in == nil {
		return nil
	}
	if *in == "" {
		*out = 0
		return nil
	}
	d, err := time.ParseDuration(*in)
	if err != nil || d < 0 {
		return badField(field, "%s must be a duration such as 30s or 2m", field)
	}
	*out = d
	return nil
}

// checkChannel validates a channel as it would be stored; types are the
// channel types the gateway takes.
func checkChannel(ch *store.Channel, types []string) error {
	if err := checkIdent("name", ch.Name, channelNameRule, "letters, digits and . _ -"); err != nil {
		return err
	}
	if !slices.Contains(types, ch.Type) {
		return badField("type", "type must be one of %v", types)
	}
	if err := checkChannelUpstream(ch); err != nil {
		return err
	}
	if len(ch.Models) == 0 && len(ch.ModelMap) == 0 {
		return badField("models", "list the models the channel serves")
	}
	if len(ch.Models) > 0 {
		if err := checkModels("models", ch.Models); err != nil {
			return err
		}
	}
	for public, upstream := range ch.ModelMap {
		if public == "" || upstream == "" {
			return badField("model_map", "model_map maps public names to upstream names; neither may be empty")
		}
	}
	if ch.Priority < 0 {
		return badField("priority", "priority must be 0 or more")
	}
	if ch.Weight < 1 || ch.Weight > 1000 {
		return badField("weight", "weight must be between 1 and 1000")
	}
	return nil
}

// checkChannelUpstream checks where and how a channel reaches its
// provider; the demo type runs inside the gateway and needs neither.
func checkChannelUpstream(ch *store.Channel) error {
	if ch.Type == "demo" {
		return nil
	}
	u, err := url.Parse(ch.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badField("base_url", "base_url must be an absolute http(s) URL, such as https://api.openai.com/v1")
	}
	if len(ch.APIKeys) == 0 {
		return badField("api_keys", "give at least one upstream API key")
	}
	for _, k := range ch.APIKeys {
		if k == "" {
			return badField("api_keys", "upstream API keys must not be empty")
		}
	}
	return nil
}

// configChannel reports whether name belongs to a channel of the
// configuration file, which the console may not shadow or edit.
func (c *Console) configChannel(name string) bool {
	for _, st := range c.gw.Channels() {
		if st.Name == name && st.Source != "console" {
			return true
		}
	}
	return false
}

func (c *Console) createChannel(cl *call) error {
	var in channelInput
	if err := decode(cl.rc, &in); err != nil {
		return err
	}
	ch := &store.Channel{Weight: 1, Enabled: true}
	if err := in.apply(ch); err != nil {
		return err
	}
	if err := checkChannel(ch, c.gw.ChannelTypes()); err != nil {
		return err
	}
	if c.configChannel(ch.Name) {
		return badField("name", "a channel of the configuration file is named %q", ch.Name)
	}
	if err := c.st.CreateChannel(cl.ctx, ch); err != nil {
		return err
	}
	undo := func(ctx context.Context) error { return c.st.DeleteChannel(ctx, ch.ID) }
	if err := c.reloadChannels(cl, ch.Name, undo); err != nil {
		return err
	}
	return cl.reply(viewChannel(ChannelStatus{Name: ch.Name}, ch))
}

// storedChannel finds a console channel by the name in the route.
func (c *Console) storedChannel(cl *call) (*store.Channel, error) {
	name, _ := cl.rc.UserValue("name").(string)
	chans, err := c.st.Channels(cl.ctx)
	if err != nil {
		return nil, err
	}
	for i := range chans {
		if chans[i].Name == name {
			return &chans[i], nil
		}
	}
	if c.configChannel(name) {
		return nil, badField("name", "%q comes from the configuration file; edit it there", name)
	}
	return nil, errNotFound
}

func (c *Console) updateChannel(cl *call) error {
	ch, err := c.storedChannel(cl)
	if err != nil {
		return err
	}
	old := *ch
	var in channelInput
	if err := decode(cl.rc, &in); err != nil {
		return err
	}
	if err := in.apply(ch); err != nil {
		return err
	}
	if ch.KeysErr != nil {
		return badField("api_keys", "the stored API keys cannot be read (%v); enter them again", ch.KeysErr)
	}
	if err := checkChannel(ch, c.gw.ChannelTypes()); err != nil {
		return err
	}
	if ch.Name != old.Name && c.configChannel(ch.Name) {
		return badField("name", "a channel of the configuration file is named %q", ch.Name)
	}
	if err := c.st.UpdateChannel(cl.ctx, ch); err != nil {
		return err
	}
	undo := func(ctx context.Context) error { return c.st.UpdateChannel(ctx, &old) }
	if err := c.reloadChannels(cl, ch.Name, undo); err != nil {
		return err
	}
	return cl.reply(viewChannel(ChannelStatus{Name: ch.Name}, ch))
}

func (c *Console) deleteChannel(cl *call) error {
	ch, err := c.storedChannel(cl)
	if err != nil {
		return err
	}
	if err := c.st.DeleteChannel(cl.ctx, ch.ID); err != nil {
		return err
	}
	skipped, err := c.gw.ChannelsChanged(cl.ctx)
	if err != nil {
		return fmt.Errorf("channel deleted, but the gateway could not reload its channels: %w", err)
	}
	c.logSkipped(skipped, "")
	return cl.reply(struct{}{})
}

// reloadChannels makes the gateway route by the store's channels. When it
// cannot use the channel named (or cannot reload at all), the change is
// undone, so that the store never holds a channel the gateway cannot run,
// and the gateway's reason goes back to the form. Other channels it
// cannot use are logged: an old broken one must not block every edit.
func (c *Console) reloadChannels(cl *call, name string, undo func(context.Context) error) error {
	skipped, err := c.gw.ChannelsChanged(cl.ctx)
	c.logSkipped(skipped, name)
	if err == nil {
		err = skipped[name]
	}
	if err == nil {
		return nil
	}
	if uerr := undo(cl.ctx); uerr != nil {
		return errors.Join(err, uerr)
	}
	if _, rerr := c.gw.ChannelsChanged(cl.ctx); rerr != nil {
		c.log.Error("console: cannot reload channels after undoing a change", "err", rerr)
	}
	return badField("", "the gateway cannot use this channel: %v", err)
}

// logSkipped logs the store channels the gateway left out, but for the
// one named (whose error goes to the form).
func (c *Console) logSkipped(skipped map[string]error, except string) {
	for name, err := range skipped {
		if name != except {
			c.log.Warn("console: a stored channel is left out of routing", "channel", name, "err", err)
		}
	}
}

type channelTestView struct {
	OK        bool    `json:"ok"`
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

// testChannel sends a tiny request through a channel. A failed upstream
// is a result, not an API error: the reply is 200 with ok false.
func (c *Console) testChannel(cl *call) error {
	name, _ := cl.rc.UserValue("name").(string)
	known := slices.ContainsFunc(c.gw.Channels(), func(st ChannelStatus) bool { return st.Name == name })
	if !known {
		return errNotFound
	}
	ctx, cancel := context.WithTimeout(cl.ctx, time.Minute)
	defer cancel()
	took, err := c.gw.TestChannel(ctx, name)
	v := channelTestView{OK: err == nil, LatencyMS: ms(took)}
	if err != nil {
		v.Error = err.Error()
	}
	return cl.reply(v)
}

// ms is a duration in milliseconds, for JSON.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
