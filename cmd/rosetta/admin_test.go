package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAdminResetPassword: the lost admin password is replaced with one
// printed once on stdout, or with ROSETTA_ADMIN_PASSWORD; the user's
// sessions end; the console takes the new password, not the old one.
func TestAdminResetPassword(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "rosetta.yaml")
	os.WriteFile(config, []byte("store: {driver: sqlite, dsn: '"+filepath.Join(dir, "rosetta.db")+"'}\n"), 0o600)
	base := start(t, config, "ROSETTA_ADMIN_PASSWORD="+browserAdminPassword)
	old := consoleClient(t, base)
	old.call("GET", "/console/api/me", nil)

	// Run from another directory: the store is the config's.
	stdout, stderr, code := runBin(t, t.TempDir(), []string{"ROSETTA_ADMIN_PASSWORD="}, "admin", "reset-password", "-config", config)
	password := strings.TrimSpace(stdout)
	if code != 0 || !regexp.MustCompile(`^[A-Za-z0-9]{16,}$`).MatchString(password) {
		t.Fatalf("reset-password: exit %d, stdout %q (want the password alone), stderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, password) || !strings.Contains(stderr, `"admin"`) {
		t.Errorf("stderr should name the user and not repeat the password:\n%s", stderr)
	}
	if status := consoleStatus(t, old, "GET", "/console/api/me"); status != 401 {
		t.Errorf("the session opened before the reset: %d, want 401", status)
	}
	if status, _ := consoleLogin(t, base, "admin", browserAdminPassword); status != 401 {
		t.Errorf("login with the old password: %d, want 401", status)
	}
	status, c := consoleLogin(t, base, "admin", password)
	if status != 200 {
		t.Fatalf("login with the new password: %d", status)
	}
	if status := consoleStatus(t, c, "GET", "/console/api/me"); status != 200 {
		t.Errorf("/console/api/me after login with the new password: %d", status)
	}

	// ROSETTA_ADMIN_PASSWORD chooses it; the user may follow the flags or
	// come before them.
	const chosen = "chosen-password-123"
	for _, args := range [][]string{
		{"admin", "reset-password", "-config", config, "admin"},
		{"admin", "reset-password", "admin", "-config", config},
	} {
		stdout, stderr, code = runBin(t, dir, []string{"ROSETTA_ADMIN_PASSWORD=" + chosen}, args...)
		if code != 0 || stdout != "" || strings.Contains(stderr, chosen) {
			t.Fatalf("%q with ROSETTA_ADMIN_PASSWORD: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
		if status, _ := consoleLogin(t, base, "admin", chosen); status != 200 {
			t.Fatalf("login with ROSETTA_ADMIN_PASSWORD after %q: %d", args, status)
		}
	}
	if status := consoleStatus(t, c, "GET", "/console/api/me"); status != 401 {
		t.Errorf("a session survived the second reset: %d", status)
	}

	// Refused: a password under the console's rule, a user that does not
	// exist, and a store that does not exist (which is not created).
	if _, stderr, code = runBin(t, dir, []string{"ROSETTA_ADMIN_PASSWORD=short"}, "admin", "reset-password", "-config", config); code != 1 || !strings.Contains(stderr, "ROSETTA_ADMIN_PASSWORD") {
		t.Errorf("short ROSETTA_ADMIN_PASSWORD: exit %d\n%s", code, stderr)
	}
	if _, stderr, code = runBin(t, dir, []string{"ROSETTA_ADMIN_PASSWORD="}, "admin", "reset-password", "-config", config, "nobody"); code != 1 || !strings.Contains(stderr, `no console user "nobody"`) {
		t.Errorf("unknown user: exit %d\n%s", code, stderr)
	}
	empty := t.TempDir()
	if _, stderr, code = runBin(t, empty, nil, "admin", "reset-password"); code != 1 || !strings.Contains(stderr, "no store at rosetta.db") {
		t.Errorf("no store: exit %d\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("reset-password without a store left files: %v", entries)
	}
}

// consoleLogin logs in to the console API and returns the status and a
// client holding the session.
func consoleLogin(t *testing.T, base, name, password string) (int, *apiClient) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &apiClient{t: t, base: base, http: &http.Client{Jar: jar}}
	j, _ := json.Marshal(map[string]string{"name": name, "password": password})
	resp, err := c.http.Post(base+"/console/api/login", "application/json", bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me map[string]any
	json.NewDecoder(resp.Body).Decode(&me)
	c.csrf, _ = me["csrf"].(string)
	return resp.StatusCode, c
}

// consoleStatus is the status of a console API call without a body.
func consoleStatus(t *testing.T, c *apiClient, method, path string) int {
	t.Helper()
	req, _ := http.NewRequest(method, c.base+path, nil)
	req.Header.Set("X-CSRF-Token", c.csrf)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
