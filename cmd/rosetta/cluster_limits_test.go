package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// consoleLimitsReachTheFleet sets limits in node 0's console and checks
// that the other nodes apply them within a second, by the gossip's
// invalidation (their store poll runs every 5 s in a cluster): a limit on
// one model added to a key they have cached, and an rpm given to a console
// channel they route to. Both limits are 20 rpm, one request a 3 s window.
func consoleLimitsReachTheFleet(t *testing.T, admin *apiClient, nodes []*gatewayProcess, upstream string) {
	t.Helper()
	created := admin.call("POST", "/console/api/keys", map[string]any{"name": "edited"})
	secret, id := created["secret"].(string), int(created["id"].(float64))
	for _, n := range nodes[1:] {
		waitAnswer(t, n, secret, "m", http.StatusOK, "", time.Second) // now cached there
	}
	admin.call("PATCH", "/console/api/keys/"+strconv.Itoa(id), map[string]any{
		"model_limits": map[string]any{"m": map[string]any{"rpm": 20}}})
	edited := time.Now()
	for _, n := range nodes[1:] {
		waitAnswer(t, n, secret, "m", http.StatusTooManyRequests, "on this key for the model 'm'", time.Second-time.Since(edited))
	}
	t.Logf("a model limit set on one node held on the others %s later", time.Since(edited).Round(time.Millisecond))

	admin.call("POST", "/console/api/channels", map[string]any{"name": "console-cc", "type": "openai",
		"base_url": upstream + "/v1", "api_keys": []string{"sk-cc-0123456789"}, "models": []string{"cc"}})
	for _, n := range nodes[1:] {
		waitAnswer(t, n, secret, "cc", http.StatusOK, "", time.Second)
	}
	admin.call("PATCH", "/console/api/channels/console-cc", map[string]any{"rpm": 20})
	edited = time.Now()
	for _, n := range nodes[1:] {
		waitAnswer(t, n, secret, "cc", http.StatusTooManyRequests, "upstream channels for 'cc' are at their rate limits",
			time.Second-time.Since(edited))
	}
	t.Logf("a console channel's rpm set on one node held on the others %s later", time.Since(edited).Round(time.Millisecond))
}

// waitAnswer sends chat requests for model to node n until one gets the
// status want, with text in its body, failing the test after within.
func waitAnswer(t *testing.T, n *gatewayProcess, secret, model string, want int, text string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		status, body := sendForBody(t, n.url(), secret, model)
		if status == want && strings.Contains(body, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s, model %s: still %d %s after %s; want %d with %q", n.addr, model, status, body, within, want, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sendForBody(t *testing.T, base, secret, model string) (int, string) {
	t.Helper()
	status, body, err := sendChat(base, secret, model)
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}
