package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/codec/dialects"
	"github.com/rosetta-gateway/rosetta/store"
)

func TestChannelLifecycle(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	ctx := context.Background()
	a.must("POST", "/console/api/channels", map[string]any{
		"name": "up", "type": "anthropic", "base_url": "https://api.example.com",
		"api_keys": []string{"sk-ant-secret-0001"}, "models": []string{"claude"}, "model_map": map[string]string{"fast": "claude"},
		"priority": 1, "weight": 3, "api_version": "2023-06-01", "timeouts": map[string]string{"connect": "2s", "total": "5m"},
	})
	chans, _ := e.st.Channels(ctx)
	if len(chans) != 1 || chans[0].Weight != 3 || chans[0].Timeouts.Connect != 2*time.Second || chans[0].Timeouts.Total != 5*time.Minute ||
		chans[0].APIKeys[0] != "sk-ant-secret-0001" || chans[0].ModelMap["fast"] != "claude" || !chans[0].Enabled {
		t.Fatalf("stored channels: %+v", chans)
	}
	if e.gw.reloads() != 1 {
		t.Errorf("ChannelsChanged called %d times, want 1", e.gw.reloads())
	}

	// The list joins the gateway's view with the store's, and never shows
	// an upstream key.
	e.gw.addStatus(ChannelStatus{Name: "up", Type: "anthropic", Source: "console", ID: chans[0].ID, State: "open", ErrorRate: 0.5})
	list := a.do("GET", "/console/api/channels", nil)
	if bytes.Contains(list.body, []byte("sk-ant-secret")) || !bytes.Contains(list.body, []byte(`"api_keys":["…0001"]`)) ||
		!bytes.Contains(list.body, []byte(`"state":"open"`)) || !bytes.Contains(list.body, []byte(`"name":"demo"`)) ||
		!bytes.Contains(list.body, []byte(`"models":["*"]`)) { // the config channel's models, from the model table
		t.Errorf("channel list: %s", list.body)
	}

	// An edit without api_keys keeps them; disabling is an edit.
	a.must("PATCH", "/console/api/channels/up", map[string]any{"enabled": false, "weight": 5})
	ch, _ := e.st.Channel(ctx, chans[0].ID)
	if ch.Enabled || ch.Weight != 5 || len(ch.APIKeys) != 1 || e.gw.reloads() != 2 {
		t.Errorf("after edit: %+v, reloads %d", ch, e.gw.reloads())
	}

	// When the gateway refuses the change, the store is put back.
	e.gw.refuse(map[string]error{"up": errors.New("cannot build channel up"), "new": errors.New("cannot build channel new")})
	r := a.do("PATCH", "/console/api/channels/up", map[string]any{"base_url": "https://other.example.com"})
	if r.status != 400 || !bytes.Contains(r.body, []byte("cannot build channel up")) {
		t.Errorf("refused edit: %d %s", r.status, r.body)
	}
	if ch, _ := e.st.Channel(ctx, chans[0].ID); ch.BaseURL != "https://api.example.com" {
		t.Errorf("refused edit stayed in the store: %s", ch.BaseURL)
	}
	if r := a.do("POST", "/console/api/channels", map[string]any{"name": "new", "type": "demo", "models": []string{"x"}}); r.status != 400 {
		t.Errorf("refused create: %d %s", r.status, r.body)
	}
	if all, _ := e.st.Channels(ctx); len(all) != 1 {
		t.Errorf("refused create stayed in the store: %+v", all)
	}
	// Another channel the gateway cannot use does not block this one.
	e.gw.refuse(map[string]error{"old-broken": errors.New("cannot build channel old-broken")})
	a.must("PATCH", "/console/api/channels/up", map[string]any{"weight": 6})
	if ch, _ := e.st.Channel(ctx, chans[0].ID); ch.Weight != 6 {
		t.Errorf("an edit refused for another channel's fault: weight %d", ch.Weight)
	}
	e.gw.refuse(nil)

	// Config channels cannot be edited or deleted here.
	if r := a.do("PATCH", "/console/api/channels/demo", map[string]any{"weight": 2}); r.status != 400 || r.errorField() != "name" {
		t.Errorf("editing a config channel: %d %s", r.status, r.body)
	}
	if r := a.do("DELETE", "/console/api/channels/nope", nil); r.status != 404 {
		t.Errorf("deleting a missing channel: %d", r.status)
	}
	a.must("DELETE", "/console/api/channels/up", nil)
	if all, _ := e.st.Channels(ctx); len(all) != 0 {
		t.Errorf("after delete: %+v", all)
	}
}

// The channel list carries the types the gateway takes, for the form, and
// a channel is checked against them: the console keeps no list of its own.
func TestChannelTypesFromGateway(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	var list struct {
		Types []string `json:"types"`
	}
	if err := json.Unmarshal(a.do("GET", "/console/api/channels", nil).body, &list); err != nil {
		t.Fatal(err)
	}
	if want := append(dialects.Names(), "demo"); !slices.Equal(list.Types, want) {
		t.Errorf("types %q, want the registry's %q", list.Types, want)
	}

	e.gw.mu.Lock()
	e.gw.types = []string{"future", "demo"}
	e.gw.mu.Unlock()
	if err := json.Unmarshal(a.do("GET", "/console/api/channels", nil).body, &list); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(list.Types, []string{"future", "demo"}) {
		t.Errorf("types %q, want the gateway's [future demo]", list.Types)
	}
	a.must("POST", "/console/api/channels", map[string]any{"name": "f", "type": "future",
		"base_url": "https://api.example.com", "api_keys": []string{"sk-future-0001"}, "models": []string{"m"}})
	r := a.do("POST", "/console/api/channels", map[string]any{"name": "g", "type": "gemini",
		"base_url": "https://api.example.com", "api_keys": []string{"sk-gemini-0001"}, "models": []string{"m"}})
	if r.status != 400 || r.errorField() != "type" || !bytes.Contains(r.body, []byte("[future demo]")) {
		t.Errorf("a type the gateway does not take: %d %s", r.status, r.body)
	}
}

func TestChannelTest(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	r := a.must("POST", "/console/api/channels/demo/test", nil)
	if r["ok"] != true || r["latency_ms"] != 42.0 {
		t.Errorf("test of demo: %v", r)
	}
	e.gw.addStatus(ChannelStatus{Name: "broken", Source: "config"})
	r = a.must("POST", "/console/api/channels/broken/test", nil)
	if r["ok"] != false || r["error"] != "upstream said 500" {
		t.Errorf("test of a failing channel: %v", r)
	}
	if r := a.do("POST", "/console/api/channels/unknown/test", nil); r.status != 404 {
		t.Errorf("test of an unknown channel: %d", r.status)
	}
}

// A channel whose stored keys do not open (sealed under another secret
// key) is listed with the reason, and an edit must give its keys again.
func TestChannelWithUnreadableKeys(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	ctx := context.Background()
	other, err := store.Open(ctx, "sqlite", filepath.Join(e.dbDir, "rosetta.db"), store.Options{SecretKey: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ch := &store.Channel{Name: "old", Type: "openai", BaseURL: "https://api.example.com/v1", APIKeys: []string{"sk-sealed-elsewhere"},
		Models: []string{"gpt-4o-mini"}, Weight: 1, Enabled: true}
	if err := other.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	list := a.do("GET", "/console/api/channels", nil)
	if list.status != 200 || !bytes.Contains(list.body, []byte(`"keys_error":"channel \"old\": store: channel api keys cannot be sealed or opened`)) {
		t.Fatalf("channel list: %d %s", list.status, list.body)
	}
	r := a.do("PATCH", "/console/api/channels/old", map[string]any{"weight": 2})
	if r.status != 400 || r.errorField() != "api_keys" || !bytes.Contains(r.body, []byte("enter them again")) {
		t.Fatalf("edit without keys: %d %s", r.status, r.body)
	}
	a.must("PATCH", "/console/api/channels/old", map[string]any{"api_keys": []string{"sk-given-again"}})
	got, err := e.st.Channel(ctx, ch.ID)
	if err != nil || got.KeysErr != nil || got.APIKeys[0] != "sk-given-again" {
		t.Fatalf("after the keys were given again: %+v, %v", got, err)
	}
}

// In a cluster the channel list carries the fleet: each node with its
// version and open streams; alone, none.
func TestChannelListShowsTheFleet(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	var list struct {
		Fleet []FleetNode `json:"fleet"`
	}
	if err := json.Unmarshal(a.do("GET", "/console/api/channels", nil).body, &list); err != nil || list.Fleet != nil {
		t.Fatalf("a single node lists a fleet: %+v, %v", list.Fleet, err)
	}
	nodes := []FleetNode{{Name: "gw1", Addr: "10.0.0.1:7946", Version: "v1", OpenStreams: 3, Self: true},
		{Name: "gw2", Addr: "10.0.0.2:7946", Version: "v1", OpenStreams: 12, CountsAge: -1}}
	e.gw.mu.Lock()
	e.gw.fleet = nodes
	e.gw.mu.Unlock()
	if err := json.Unmarshal(a.do("GET", "/console/api/channels", nil).body, &list); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(list.Fleet, nodes) {
		t.Fatalf("fleet %+v, want %+v", list.Fleet, nodes)
	}
}
