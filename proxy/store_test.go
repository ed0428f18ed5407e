package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// watchedStore is a SQLite store in a temporary directory that counts key
// lookups and pings, and fails them on demand.
type watchedStore struct {
	store.Store
	lookups, pings atomic.Int64
	fail           atomic.Bool
}

var errDown = errors.New("store is down")

func (s *watchedStore) KeyByHash(ctx context.Context, h [32]byte) (*store.Key, error) {
	s.lookups.Add(1)
	if s.fail.Load() {
		return nil, errDown
	}
	return s.Store.KeyByHash(ctx, h)
}

func (s *watchedStore) Ping(ctx context.Context) error {
	s.pings.Add(1)
	if s.fail.Load() {
		return errDown
	}
	return s.Store.Ping(ctx)
}

func openStore(t testing.TB) *watchedStore {
	t.Helper()
	return openStoreAt(t, filepath.Join(t.TempDir(), "rosetta.db"), 7)
}

// openStoreAt opens the SQLite store at path with a secret key of secret's
// bytes.
func openStoreAt(t testing.TB, path string, secret byte) *watchedStore {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", path,
		store.Options{SecretKey: bytes.Repeat([]byte{secret}, store.SecretKeySize)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &watchedStore{Store: st}
}

// createKey inserts a key for secret as the console does; edit, when not
// nil, changes it first.
func createKey(t testing.TB, st store.Store, secret string, edit func(*store.Key)) *store.Key {
	t.Helper()
	k := &store.Key{Name: "console-" + secret[:8], Hash: proxy.HashKey([]byte(secret)), Prefix: secret[:8],
		Models: []string{"*"}, Enabled: true}
	if edit != nil {
		edit(k)
	}
	if err := st.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return k
}

const (
	consoleKey  = "sk-console-0123456789abcdef"
	demoChannel = "  - {name: demo, type: demo, models: [demo], pace: 1ms}\n"
	demoBody    = `{"model":"demo","messages":[{"role":"user","content":"Hi"}]}`
)

func TestConsoleKeyAuthenticatesAndIsRevokedAtOnce(t *testing.T) {
	st := openStore(t)
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	k := createKey(t, st, consoleKey, nil)

	if resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody); resp.StatusCode != 200 {
		t.Fatalf("console key: %d %s", resp.StatusCode, body)
	}
	k.Models = []string{"gpt-*"}
	if err := st.UpdateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	tg.g.KeyChanged(k.Hash)
	resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody)
	checkError(t, resp, body, 403, "model_not_allowed")

	k.Enabled = false
	if err := st.UpdateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	tg.g.KeyChanged(k.Hash)
	resp, body = tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody)
	checkError(t, resp, body, 401, "invalid_api_key")
}

func TestKeyOfDisabledUserIsRefused(t *testing.T) {
	st := openStore(t)
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	u := &store.User{Name: "carol", PasswordHash: "x", Role: store.RoleUser}
	if err := st.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	k := createKey(t, st, consoleKey, func(k *store.Key) { k.OwnerID = u.ID })
	setDisabled := func(disabled bool) {
		u.Disabled = disabled
		if err := st.UpdateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		tg.g.KeyChanged(k.Hash) // as the console does
	}
	if resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody); resp.StatusCode != 200 {
		t.Fatalf("before disabling: %d %s", resp.StatusCode, body)
	}
	setDisabled(true)
	resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody)
	checkError(t, resp, body, 401, "invalid_api_key")
	setDisabled(false)
	if resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody); resp.StatusCode != 200 {
		t.Fatalf("after enabling again: %d %s", resp.StatusCode, body)
	}
}

// A key revoked through another node (here: in the store directly, with
// no KeyChanged call) is refused once this node polls the key changes,
// long before its cache entry would age out.
func TestKeyRevokedElsewhereIsPolled(t *testing.T) {
	st := openStore(t)
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st, KeyPoll: 20 * time.Millisecond})
	k := createKey(t, st, consoleKey, nil)
	if resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody); resp.StatusCode != 200 {
		t.Fatalf("console key: %d %s", resp.StatusCode, body)
	}
	k.Enabled = false
	if err := st.UpdateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for {
		resp, _ := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody)
		if resp.StatusCode == 401 {
			break
		}
		if time.Since(revoked) > 5*time.Second {
			t.Fatalf("the key revoked elsewhere still gets %d after 5s\n%s", resp.StatusCode, tg.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("refused %s after the revoke", time.Since(revoked).Round(time.Millisecond))
}

func TestExpiredConsoleKey(t *testing.T) {
	st := openStore(t)
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	createKey(t, st, "sk-expired-0123456789abcdef", func(k *store.Key) { k.Expires = time.Now().Add(-time.Minute) })
	resp, body := tg.do(t, "POST", "/v1/chat/completions", "sk-expired-0123456789abcdef", demoBody)
	checkError(t, resp, body, 401, "expired_api_key")

	// A key that expires while cached fails from the cache.
	expires := time.Now().Add(800 * time.Millisecond)
	createKey(t, st, consoleKey, func(k *store.Key) { k.Expires = expires })
	if resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody); resp.StatusCode != 200 {
		t.Fatalf("before expiry: %d %s", resp.StatusCode, body)
	}
	lookups := st.lookups.Load()
	time.Sleep(time.Until(expires))
	resp, body = tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody)
	checkError(t, resp, body, 401, "expired_api_key")
	if n := st.lookups.Load() - lookups; n != 0 {
		t.Fatalf("%d store lookups: the expired key should have come from the cache", n)
	}
}

func TestUnknownKeysDoNotHammerTheStore(t *testing.T) {
	st := openStore(t)
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	for range 20 {
		resp, body := tg.do(t, "POST", "/v1/chat/completions", "sk-garbage-0123456789abcdef", demoBody)
		checkError(t, resp, body, 401, "invalid_api_key")
	}
	// The cache applies its writes asynchronously: a request or two may
	// come before the negative entry is in place.
	if n := st.lookups.Load(); n > 3 {
		t.Fatalf("%d store lookups for 20 requests with one unknown key", n)
	}
}

func TestStoreFailureIs500NotUnauthorized(t *testing.T) {
	st := openStore(t)
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	createKey(t, st, consoleKey, nil)
	st.fail.Store(true)
	resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody)
	checkError(t, resp, body, 500, "")

	req, _ := http.NewRequest("POST", tg.url+"/v1/messages",
		strings.NewReader(`{"model":"demo","max_tokens":10,"messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("x-api-key", consoleKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 500 || e.Type != "error" || e.Error.Type != "api_error" || !strings.Contains(e.Error.Message, "req_") {
		t.Fatalf("anthropic client: %d %+v", resp.StatusCode, e)
	}
	if !strings.Contains(tg.logs.String(), "cannot look up key") {
		t.Error("the store failure is not logged")
	}

	st.fail.Store(false) // a failure is not cached
	if resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, demoBody); resp.StatusCode != 200 {
		t.Fatalf("after the store recovered: %d %s", resp.StatusCode, body)
	}
}

func TestReadyzChecksTheStore(t *testing.T) {
	st := openStore(t)
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	for range 10 {
		resp, body := tg.do(t, "GET", "/readyz", "", "")
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"store":"ok"`)) {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	if n := st.pings.Load(); n > 2 {
		t.Fatalf("%d pings for 10 probes within a second", n)
	}
	st.fail.Store(true)
	waitFor(t, "readyz to see the store down", func() bool {
		resp, body := tg.do(t, "GET", "/readyz", "", "")
		return resp.StatusCode == 503 && bytes.Contains(body, []byte(`"store":"unreachable"`))
	})
}

// storeChannel is a console channel of the OpenAI style at url.
func storeChannel(name, url string, edit func(*store.Channel)) *store.Channel {
	c := &store.Channel{Name: name, Type: "openai", BaseURL: url, APIKeys: []string{upstreamKey},
		Models: []string{"gpt-4o-mini"}, ModelMap: map[string]string{"store-fast": "gpt-4o-mini"}, Enabled: true}
	if edit != nil {
		edit(c)
	}
	return c
}

func TestStoreChannelBecomesRoutableAndGoes(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	body := `{"model":"store-fast","messages":[{"role":"user","content":"Hi"}]}`
	resp, b := tg.do(t, "POST", "/v1/chat/completions", openKey, body)
	checkError(t, resp, b, 503, "model_not_found")

	c := storeChannel("console-oa", up.baseURL(), nil)
	if err := st.CreateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.g.ChannelsChanged(ctx); err != nil {
		t.Fatal(err)
	}
	resp, b = tg.do(t, "POST", "/v1/chat/completions", openKey, body)
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"store-fast"`)) {
		t.Fatalf("through the store channel: %d %s", resp.StatusCode, b)
	}
	if got := up.lastRequest().header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Fatalf("upstream got credentials %q, want the decrypted channel key", got)
	}
	want := proxy.ChannelStatus{Name: "console-oa", Type: "openai", Source: "console", ID: c.ID, State: "closed", Requests: 1}
	if got := findChannel(tg.g.Channels(), "console-oa"); got != want {
		t.Fatalf("status %+v, want %+v", got, want)
	}

	c.Enabled = false
	if err := st.UpdateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.g.ChannelsChanged(ctx); err != nil {
		t.Fatal(err)
	}
	resp, b = tg.do(t, "POST", "/v1/chat/completions", openKey, body)
	checkError(t, resp, b, 503, "model_not_found")
	if got := findChannel(tg.g.Channels(), "console-oa"); got.State != "disabled" || got.ID != c.ID {
		t.Fatalf("disabled channel reported as %+v", got)
	}
}

// A channel made or disabled through another node's console (here: written
// to the store directly, with no ChannelsChanged call) is picked up by
// polling.
func TestStoreChannelChangedElsewhereIsPolled(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st, ChannelPoll: 20 * time.Millisecond})
	body := `{"model":"store-fast","messages":[{"role":"user","content":"Hi"}]}`
	status := func() int {
		resp, _ := tg.do(t, "POST", "/v1/chat/completions", openKey, body)
		return resp.StatusCode
	}
	waitFor := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for status() != want {
			if time.Now().After(deadline) {
				t.Fatalf("still not %d after 5s of polling", want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := status(); got != 503 {
		t.Fatalf("before the channel exists: %d", got)
	}
	c := storeChannel("console-oa", up.baseURL(), nil)
	if err := st.CreateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(200)
	c.Enabled = false
	if err := st.UpdateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(503)
	if !strings.Contains(tg.logs.String(), "routing reloaded") {
		t.Error("the reload is not logged")
	}
}

// A store channel whose API keys were sealed with another secret key is
// left out with the reason logged; the gateway starts and routes the rest.
func TestStoreChannelWithUnreadableKeysIsLeftOut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rosetta.db")
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	old := openStoreAt(t, path, 7)
	for _, name := range []string{"sealed-before", "fine"} {
		c := storeChannel(name, up.baseURL(), func(c *store.Channel) {
			if name == "fine" {
				c.Type, c.BaseURL, c.APIKeys, c.ModelMap = "demo", "", nil, nil
			}
		})
		if err := old.CreateChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	tg := startGatewayWith(t, "", proxy.Options{Store: openStoreAt(t, path, 9)})
	if got := findChannel(tg.g.Channels(), "fine"); got.State != "closed" {
		t.Fatalf("the readable channel: %+v\n%s", got, tg.logs.String())
	}
	resp, b := tg.do(t, "POST", "/v1/chat/completions", openKey, `{"model":"store-fast","messages":[{"role":"user","content":"Hi"}]}`)
	checkError(t, resp, b, 503, "model_not_found")
	if logs := tg.logs.String(); !strings.Contains(logs, `channel \"sealed-before\"`) || !strings.Contains(logs, store.SecretKeyEnv) {
		t.Fatalf("the left-out channel is not logged with its reason:\n%s", logs)
	}
}

func findChannel(list []proxy.ChannelStatus, name string) proxy.ChannelStatus {
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	return proxy.ChannelStatus{}
}

func TestStoreChannelCannotTakeAConfigName(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	if err := st.CreateChannel(ctx, storeChannel("demo", up.baseURL(), nil)); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateChannel(ctx, storeChannel("console-oa", up.baseURL(), nil)); err != nil {
		t.Fatal(err)
	}
	skipped, err := tg.g.ChannelsChanged(ctx)
	if err != nil || len(skipped) != 1 || !strings.Contains(fmt.Sprint(skipped["demo"]), `channel "demo": name taken`) {
		t.Fatalf("clash not reported: %v, %v", skipped, err)
	}
	for model, want := range map[string]int{"demo": 200, "store-fast": 200} {
		if resp, b := tg.do(t, "POST", "/v1/chat/completions", openKey,
			`{"model":"`+model+`","messages":[{"role":"user","content":"Hi"}]}`); resp.StatusCode != want {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, b)
		}
	}
	if got := findChannel(tg.g.Channels(), "demo"); got.Source != "config" {
		t.Fatalf("demo is %+v, want the configuration's", got)
	}
}

// TestChannelsChangedKeepsState: a swap of the routing table keeps the
// circuit state and counters of the channels that stay, and a stream in
// flight on a channel that goes finishes.
func TestChannelsChangedKeepsState(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	slow := newMock(t, streamReply(events(fixture(t, "chat_stream.sse")), 30*time.Millisecond))
	tg := startGatewayWith(t, `  - {name: dead, type: openai, base_url: "`+closedPort(t)+`", api_keys: [k], models: [gpt-dead],
      breaker: {failures: 1, cooldown: 1m}}
`, proxy.Options{Store: st})
	resp, b := tg.do(t, "POST", "/v1/chat/completions", openKey, `{"model":"gpt-dead","messages":[{"role":"user","content":"Hi"}]}`)
	checkError(t, resp, b, 502, "upstream_unreachable")

	c := storeChannel("console-slow", slow.baseURL(), nil)
	if err := st.CreateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.g.ChannelsChanged(ctx); err != nil {
		t.Fatal(err)
	}
	if got := findChannel(tg.g.Channels(), "dead"); got.State != "open" || got.Requests != 1 || got.ErrorRate != 1 {
		t.Fatalf("dead channel after the swap: %+v", got)
	}

	req, _ := http.NewRequest("POST", tg.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"store-fast","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+openKey)
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	if sresp.StatusCode != 200 {
		t.Fatalf("stream: %d", sresp.StatusCode)
	}
	c.Enabled = false
	if err := st.UpdateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.g.ChannelsChanged(ctx); err != nil {
		t.Fatal(err)
	}
	var rest bytes.Buffer
	if _, err := rest.ReadFrom(sresp.Body); err != nil || !bytes.HasSuffix(rest.Bytes(), []byte("data: [DONE]\n\n")) {
		t.Fatalf("stream cut by the swap (%v):\n%s", err, rest.Bytes())
	}
}
