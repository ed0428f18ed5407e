package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/pgtest"
)

// Two gateway processes share one PostgreSQL store, as several nodes do. A
// key made in one node's console works on the other, and revoked there it
// is refused on the other within about a second; a channel made there is
// routed on the other within its channel poll.
func TestTwoNodesShareTheStore(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	config := filepath.Join(t.TempDir(), "rosetta.yaml")
	os.WriteFile(config, []byte("store: {driver: postgres, dsn: '"+dsn+"'}\n"), 0o600)
	env := []string{"ROSETTA_ADMIN_PASSWORD=" + browserAdminPassword, "ROSETTA_SECRET_KEY=" + string(bytes.Repeat([]byte("ab"), 32))}
	a, b := start(t, config, env...), start(t, config, env...)

	admin := consoleClient(t, a)
	created := admin.call("POST", "/console/api/keys", map[string]any{"name": "shared"})
	secret, id := created["secret"].(string), int(created["id"].(float64))
	if secret == "" {
		t.Fatalf("key not created: %v", created)
	}
	useKey(t, b, secret, http.StatusOK)

	admin.call("POST", "/console/api/keys/"+strconv.Itoa(id)+"/revoke", nil)
	revoked := time.Now()
	waitStatus(t, b, secret, "/v1/models", "", http.StatusUnauthorized, 3*time.Second)
	t.Logf("node b refused the key %s after node a revoked it", time.Since(revoked).Round(time.Millisecond))

	// A channel made on a is routed on b.
	other := admin.call("POST", "/console/api/keys", map[string]any{"name": "second"})["secret"].(string)
	body := `{"model":"from-console","messages":[{"role":"user","content":"Hi"}]}`
	waitStatus(t, b, other, "/v1/chat/completions", body, http.StatusServiceUnavailable, time.Second)
	admin.call("POST", "/console/api/channels", map[string]any{"name": "made-on-a", "type": "demo", "models": []string{"from-console"}})
	waitStatus(t, b, other, "/v1/chat/completions", body, http.StatusOK, 10*time.Second)
}

// waitStatus sends the request (GET without a body, else POST) with the
// key until it gets want, failing after within.
func waitStatus(t *testing.T, base, secret, path, body string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		method := "GET"
		if body != "" {
			method = "POST"
		}
		req, _ := http.NewRequest(method, base+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: still %d after %s, want %d", method, path, resp.StatusCode, within, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// apiClient is a logged-in console session.
type apiClient struct {
	t          *testing.T
	base, csrf string
	http       *http.Client
}

func consoleClient(t *testing.T, base string) *apiClient {
	jar, _ := cookiejar.New(nil)
	c := &apiClient{t: t, base: base, http: &http.Client{Jar: jar}}
	me := c.call("POST", "/console/api/login", map[string]any{"name": "admin", "password": browserAdminPassword})
	c.csrf, _ = me["csrf"].(string)
	return c
}

// call sends a JSON request and returns the decoded reply, failing the
// test unless it is a 200.
func (c *apiClient) call(method, path string, body any) map[string]any {
	c.t.Helper()
	j, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(j))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", c.csrf)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 {
		c.t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out
}
