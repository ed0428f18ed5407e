package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// A console channel's rpm passes it over in routing, as a configuration
// channel's does; an edit that lifts it, loaded as the console loads it,
// routes to it again.
func TestStoreChannelLimitPassesOver(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	ok := fixture(t, "chat_response.json")
	capped, spare := newMock(t, jsonReply(200, ok)), newMock(t, jsonReply(200, ok))
	tg := startGatewayWith(t, demoChannel, proxy.Options{Store: st})
	c := storeChannel("capped", capped.baseURL(), func(c *store.Channel) { c.RPM = 2 })
	for _, ch := range []*store.Channel{c, storeChannel("spare", spare.baseURL(), func(c *store.Channel) { c.Priority = 1 })} {
		if err := st.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	reload := func() {
		t.Helper()
		if skipped, err := tg.g.ChannelsChanged(ctx); err != nil || len(skipped) > 0 {
			t.Fatalf("ChannelsChanged: %v %v", skipped, err)
		}
	}
	reload()
	fast := `{"model":"store-fast","messages":[{"role":"user","content":"Hi"}]}`
	for i := range 5 {
		if resp, body := tg.do(t, "POST", "/v1/chat/completions", openKey, fast); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if capped.hits.Load() != 2 || spare.hits.Load() != 3 {
		t.Fatalf("capped got %d, spare %d; want 2 and 3", capped.hits.Load(), spare.hits.Load())
	}
	if st := findChannel(tg.g.Channels(), "capped"); st.RPM != 2 || st.TPM != 0 {
		t.Errorf("capped reports rpm %d tpm %d, want 2 and 0", st.RPM, st.TPM)
	}
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	if !strings.Contains(string(metrics), `rosetta_rate_limited_total{scope="channel"} 3`) {
		t.Errorf("metrics: the console channel was not passed over three times")
	}

	c.RPM = 0
	if err := st.UpdateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	reload()
	tg.do(t, "POST", "/v1/chat/completions", openKey, fast)
	if capped.hits.Load() != 3 {
		t.Errorf("with its limit lifted, capped got %d requests, want 3", capped.hits.Load())
	}
}

// A console key's limit on one model refuses that model with a 429 naming
// it, leaves the key's other models alone, and goes with an edit.
func TestStoreKeyModelLimit(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGatewayWith(t, channel("oa", up.baseURL(), "")+demoChannel, proxy.Options{Store: st})
	k := createKey(t, st, consoleKey, func(k *store.Key) {
		k.ModelLimits = map[string]store.Limits{"gpt-4o-mini": {RPM: 1}}
	})
	send := func(body string) (int, string) {
		resp, b := tg.do(t, "POST", "/v1/chat/completions", consoleKey, body)
		return resp.StatusCode, string(b)
	}
	if code, body := send(miniBody); code != 200 {
		t.Fatalf("first gpt-4o-mini request: %d %s", code, body)
	}
	resp, body := tg.do(t, "POST", "/v1/chat/completions", consoleKey, miniBody)
	checkError(t, resp, body, 429, "rate_limit_exceeded")
	if !strings.Contains(string(body), "on this key for the model 'gpt-4o-mini'") {
		t.Errorf("the 429 does not name the model: %s", body)
	}
	for range 3 {
		if code, body := send(demoBody); code != 200 {
			t.Fatalf("a model without a limit: %d %s", code, body)
		}
	}
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	if !strings.Contains(string(metrics), `rosetta_rate_limited_total{scope="key_model"} 1`) {
		t.Errorf("metrics lack the key_model refusal")
	}

	k.ModelLimits = nil
	if err := st.UpdateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	tg.g.KeyChanged(k.Hash)
	if code, body := send(miniBody); code != 200 {
		t.Fatalf("with the model limit removed: %d %s", code, body)
	}
}
