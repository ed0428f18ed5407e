package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttemptsOutliveARestart: the attempts of a request that failed over
// are kept with its usage row in the store, so the console shows them
// after the gateway that served it has stopped and another started. Rows
// wait up to usage_flush (an hour here): only the flush at shutdown writes
// this one.
func TestAttemptsOutliveARestart(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rosetta.yaml"), []byte(`
store: {usage_flush: 1h}
channels:
  - {name: refused, type: openai, base_url: "http://127.0.0.1:1/v1", api_keys: [k], models: [demo], priority: 0}
  - {name: demo, type: demo, models: [demo], pace: 1ms, priority: 1}
`), 0o600)
	t.Setenv("ROSETTA_ADMIN_PASSWORD", browserAdminPassword)
	r := startDemo(t, dir, "-config", "rosetta.yaml")
	req, _ := http.NewRequest("POST", "http://"+r.addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo","messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+r.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("the request: %d, id %q", resp.StatusCode, id)
	}
	r.stop(t)

	r = startDemo(t, dir, "-config", "rosetta.yaml")
	status, c := consoleLogin(t, "http://"+r.addr, "admin", browserAdminPassword)
	if status != 200 {
		t.Fatalf("login: %d", status)
	}
	rows := c.call("GET", "/console/api/usage", nil)["rows"].([]any)
	var attempts []any
	for _, row := range rows {
		if row := row.(map[string]any); row["request_id"] == id {
			attempts, _ = row["attempts"].([]any)
		}
	}
	if len(attempts) != 2 {
		t.Fatalf("the request's attempts after a restart: %v (rows %v)", attempts, rows)
	}
	for i, want := range []string{"refused 502 connection refused to 127.0.0.1:1", "demo 200 <nil>"} {
		a := attempts[i].(map[string]any)
		if got := fmt.Sprint(a["channel"], " ", a["status"], " ", a["error"]); got != want || a["duration_ms"].(float64) <= 0 {
			t.Errorf("attempt %d: %v, want %s and a duration", i, a, want)
		}
	}
}
