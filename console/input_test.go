package console

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBadInputNamesTheField sends bad input to every form and query and
// checks for a 400 that names the field at fault.
func TestBadInputNamesTheField(t *testing.T) {
	e, a, key := formsEnv(t)
	users := a.must("GET", "/console/api/users", nil)["users"].([]any)
	adminID := strconv.Itoa(int(users[0].(map[string]any)["id"].(float64)))
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	anon := e.browser("127.0.0.1")

	f := func(b *browser, method, path string, body any, field string) {
		t.Helper()
		r := b.do(method, path, body)
		if r.status != 400 || r.errorField() != field {
			t.Errorf("%s %s %v: %d %s, want 400 naming %q", method, path, body, r.status, r.body, field)
		}
	}
	// Login.
	f(anon, "POST", "/console/api/login", map[string]any{"password": "x"}, "name")
	f(anon, "POST", "/console/api/login", map[string]any{"name": "admin"}, "password")
	f(anon, "POST", "/console/api/login", map[string]any{"name": 5, "password": "x"}, "name")
	f(anon, "POST", "/console/api/login", `{"name":"a","password":"b","totp":1}`, "totp")
	f(anon, "POST", "/console/api/login", `{"name":`, "")
	// Password change.
	f(a, "POST", "/console/api/me/password", map[string]any{"current_password": adminPassword, "password": "short"}, "password")
	f(a, "POST", "/console/api/me/password", map[string]any{"current_password": "wrong-one", "password": "long-enough-1"}, "current_password")
	// Keys, create and edit.
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": ""}, "name"},
		{map[string]any{"name": " padded "}, "name"},
		{map[string]any{"name": string(make([]byte, 65))}, "name"},
		{map[string]any{"name": "k", "models": []string{}}, "models"},
		{map[string]any{"name": "k", "models": []string{"a*b"}}, "models"},
		{map[string]any{"name": "k", "models": []string{"has space"}}, "models"},
		{map[string]any{"name": "k", "models": "demo"}, "models"},
		{map[string]any{"name": "k", "rpm": -1}, "rpm"},
		{map[string]any{"name": "k", "tpm": -5}, "tpm"},
		{map[string]any{"name": "k", "rpm": 1.5}, "rpm"},
		{map[string]any{"name": "k", "expires": "tomorrow"}, "expires"},
		{map[string]any{"name": "k", "expires": past}, "expires"},
		{map[string]any{"name": "k", "owner_id": 999}, "owner_id"},
		{map[string]any{"name": "k", "secret": "mine"}, "secret"},
	} {
		f(a, "POST", "/console/api/keys", tc.body, tc.field)
		if tc.field != "owner_id" {
			f(a, "PATCH", key, tc.body, tc.field)
		}
	}
	f(a, "POST", "/console/api/keys", map[string]any{}, "name")
	f(a, "PATCH", key, map[string]any{"owner_id": 999}, "owner_id")
	// Users, create and edit.
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "bad name", "password": "long-enough"}, "name"},
		{map[string]any{"name": "-dash", "password": "long-enough"}, "name"},
		{map[string]any{"name": "ok", "password": "short"}, "password"},
		{map[string]any{"name": "ok", "password": "long-enough", "role": "root"}, "role"},
		{map[string]any{"name": "ok", "password": "long-enough", "disabled": "yes"}, "disabled"},
	} {
		f(a, "POST", "/console/api/users", tc.body, tc.field)
	}
	f(a, "POST", "/console/api/users", map[string]any{"password": "long-enough"}, "name")
	f(a, "POST", "/console/api/users", map[string]any{"name": "ok"}, "password")
	f(a, "PATCH", "/console/api/users/"+adminID, map[string]any{"name": "has space"}, "name")
	// Channels, create and edit.
	good := func(over map[string]any) map[string]any {
		c := map[string]any{"name": "up", "type": "openai", "base_url": "https://api.example.com/v1",
			"api_keys": []string{"sk-upstream-1234"}, "models": []string{"gpt-4o-mini"}}
		for k, v := range over {
			c[k] = v
		}
		return c
	}
	for _, tc := range []struct {
		over  map[string]any
		field string
	}{
		{map[string]any{"name": "has/slash"}, "name"},
		{map[string]any{"name": "demo"}, "name"}, // taken by the configuration file
		{map[string]any{"type": "bedrock"}, "type"},
		{map[string]any{"base_url": "api.example.com"}, "base_url"},
		{map[string]any{"base_url": "ftp://api.example.com"}, "base_url"},
		{map[string]any{"api_keys": []string{}}, "api_keys"},
		{map[string]any{"api_keys": []string{""}}, "api_keys"},
		{map[string]any{"models": []string{}}, "models"},
		{map[string]any{"model_map": map[string]string{"fast": ""}}, "model_map"},
		{map[string]any{"priority": -1}, "priority"},
		{map[string]any{"weight": 0}, "weight"},
		{map[string]any{"timeouts": map[string]any{"connect": "5 seconds"}}, "timeouts.connect"},
		{map[string]any{"timeouts": map[string]any{"total": "-1s"}}, "timeouts.total"},
		{map[string]any{"enabled": "no"}, "enabled"},
	} {
		f(a, "POST", "/console/api/channels", good(tc.over), tc.field)
		if tc.over["name"] != "demo" {
			f(a, "PATCH", "/console/api/channels/mine", good(tc.over), tc.field)
		}
	}
	// Usage queries.
	for _, q := range []struct{ query, field string }{
		{"from=yesterday", "from"},
		{"to=2030-13-01T00:00:00Z", "to"},
		{"from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z", "from"},
		{"key_id=abc", "key_id"},
		{"status=99", "status"},
		{"limit=0", "limit"},
		{"limit=10001", "limit"},
		{"before_id=-3", "before_id"},
	} {
		f(a, "GET", "/console/api/usage?"+q.query, nil, q.field)
	}
	f(a, "GET", "/console/api/usage/buckets?width=1s", nil, "width")
	f(a, "GET", "/console/api/usage/buckets?width=wide", nil, "width")
	f(a, "GET", "/console/api/usage/buckets?width=10s&from=2020-01-01T00:00:00Z&to=2030-01-01T00:00:00Z", nil, "width")
}

// formsEnv is a console with an admin logged in, a key "existing" (whose
// path it returns) and a console channel "mine", for bad input to edit.
func formsEnv(t *testing.T) (*env, *browser, string) {
	e := newEnv(t)
	a := e.admin()
	keyID, _ := a.createKey("existing")
	a.must("POST", "/console/api/channels", map[string]any{"name": "mine", "type": "demo", "models": []string{"m"}})
	return e, a, "/console/api/keys/" + strconv.FormatInt(keyID, 10)
}

// The message says what is wrong in the terms of the form.
func TestBadInputMessages(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	for _, tc := range []struct {
		body        any
		status      int
		field, want string
	}{
		{map[string]any{"name": "k", "rpm": 1.5}, 400, "rpm", "rpm must be a whole number within range"},
		{`{"name":"k","tpm":1e30}`, 400, "tpm", "tpm must be a whole number within range"},
		{map[string]any{"name": "k", "rpm": "10"}, 400, "rpm", "rpm must be a JSON number"},
		{`[]`, 400, "", "the body must be a JSON object"},
		{`{"name":"k","models":["` + strings.Repeat("m", maxFormBody) + `"]}`, 413, "", "the body is larger than 64 KiB"},
	} {
		r := a.do("POST", "/console/api/keys", tc.body)
		msg, _ := r.json()["error"].(map[string]any)["message"].(string)
		if r.status != tc.status || r.errorField() != tc.field || msg != tc.want {
			t.Errorf("%.60v: %d field %q %q; want %d field %q %q", tc.body, r.status, r.errorField(), msg, tc.status, tc.field, tc.want)
		}
	}
}
