package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestKeySecretShownOnceAndOnlyItsHashStored(t *testing.T) {
	e := newEnv(t)
	u := e.user("alice")
	k := u.must("POST", "/console/api/keys", map[string]any{"name": "app", "models": []string{"gpt-*", "demo"}, "rpm": 60, "tpm": 1000})
	secret, _ := k["secret"].(string)
	if !regexp.MustCompile(`^sk-rst-[0-9A-Za-z]{40}$`).MatchString(secret) {
		t.Fatalf("secret %q: want sk-rst- and 40 base62 characters", secret)
	}
	id := int64(k["id"].(float64))
	stored, err := e.st.Key(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Hash != sha256.Sum256([]byte(secret)) || stored.Prefix != secret[:11] || k["prefix"] != secret[:11] {
		t.Errorf("stored hash/prefix %x %q, reply prefix %v", stored.Hash, stored.Prefix, k["prefix"])
	}
	if stored.RPM != 60 || stored.TPM != 1000 || strings.Join(stored.Models, ",") != "gpt-*,demo" || !stored.Enabled {
		t.Errorf("stored key %+v", stored)
	}
	// Never again: not in the key, not in the list.
	one := u.do("GET", "/console/api/keys/"+strconv.FormatInt(id, 10), nil)
	all := u.do("GET", "/console/api/keys", nil)
	for _, r := range []*reply{one, all} {
		if r.status != 200 || bytes.Contains(r.body, []byte(secret)) || bytes.Contains(r.body, []byte(`"secret"`)) {
			t.Errorf("%d %s: shows the secret again", r.status, r.body)
		}
	}
	// And not anywhere in the database files.
	files, _ := filepath.Glob(filepath.Join(e.dbDir, "rosetta.db*"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(secret[11:])) {
			t.Errorf("%s holds the secret", f)
		}
	}
	if len(files) == 0 {
		t.Fatal("no database files to check")
	}
}

func TestKeyEditRevokeDelete(t *testing.T) {
	e := newEnv(t)
	u := e.user("alice")
	id, secret := u.createKey("app")
	hash := sha256.Sum256([]byte(secret))
	path := "/console/api/keys/" + strconv.FormatInt(id, 10)
	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)

	k := u.must("PATCH", path, map[string]any{"name": "renamed", "models": []string{"demo"}, "expires": expires.Format(time.RFC3339)})
	if k["name"] != "renamed" || k["expires"] != expires.Format(time.RFC3339) {
		t.Errorf("edited key: %v", k)
	}
	if !e.gw.keyChanged(hash) {
		t.Error("edit did not call KeyChanged")
	}

	e.gw.forgetChanges()
	k = u.must("POST", path+"/revoke", nil)
	stored, _ := e.st.Key(context.Background(), id)
	if k["enabled"] != false || k["usable"] != false || stored.Enabled {
		t.Errorf("revoked key: reply %v, stored enabled %v", k, stored.Enabled)
	}
	if !e.gw.keyChanged(hash) {
		t.Error("revoke did not call KeyChanged")
	}
	// A revoked key cannot be used from the playground either.
	if r := u.do("POST", "/console/api/playground/"+strconv.FormatInt(id, 10)+"/v1/chat/completions", `{}`); r.status != 403 {
		t.Errorf("playground with a revoked key: %d %s", r.status, r.body)
	}

	e.gw.forgetChanges()
	u.must("DELETE", path, nil)
	if !e.gw.keyChanged(hash) {
		t.Error("delete did not call KeyChanged")
	}
	if r := u.do("GET", path, nil); r.status != 404 {
		t.Errorf("deleted key: %d", r.status)
	}
}

// TestKeysOfOthers: a user can neither see nor touch another user's key;
// the answer is 404, as for a key that does not exist.
func TestKeysOfOthers(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.user("alice"), e.user("bob")
	id, secret := alice.createKey("alice's")
	bob.createKey("bob's")
	p := "/console/api/keys/" + strconv.FormatInt(id, 10)
	for _, rt := range []struct {
		method, path string
		body         any
	}{
		{"GET", p, nil},
		{"PATCH", p, map[string]any{"name": "mine now"}},
		{"POST", p + "/revoke", nil},
		{"DELETE", p, nil},
		{"GET", p + "/models", nil},
		{"POST", "/console/api/playground/" + strconv.FormatInt(id, 10) + "/v1/chat/completions", `{}`},
		{"GET", "/console/api/usage?key_id=" + strconv.FormatInt(id, 10), nil},
		{"GET", "/console/api/usage/buckets?key_id=" + strconv.FormatInt(id, 10), nil},
	} {
		if r := bob.do(rt.method, rt.path, rt.body); r.status != 404 {
			t.Errorf("bob %s %s: %d %s, want 404", rt.method, rt.path, r.status, r.body)
		}
	}
	list := bob.do("GET", "/console/api/keys", nil)
	if bytes.Contains(list.body, []byte("alice's")) || !bytes.Contains(list.body, []byte("bob's")) {
		t.Errorf("bob's list: %s", list.body)
	}
	stored, _ := e.st.Key(context.Background(), id)
	if stored.Name != "alice's" || !stored.Enabled || e.gw.keyChanged(sha256.Sum256([]byte(secret))) {
		t.Errorf("bob changed alice's key: %+v", stored)
	}
	// An admin sees both, with their owners, and may revoke alice's.
	all := e.admin()
	list = all.do("GET", "/console/api/keys", nil)
	if !bytes.Contains(list.body, []byte(`"owner":"alice"`)) || !bytes.Contains(list.body, []byte(`"owner":"bob"`)) {
		t.Errorf("admin's list: %s", list.body)
	}
	all.must("POST", p+"/revoke", nil)
}

func TestAdminIssuesKeyForAnotherUser(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice")
	aliceID := int64(alice.must("GET", "/console/api/me", nil)["user"].(map[string]any)["id"].(float64))
	k := e.admin().must("POST", "/console/api/keys", map[string]any{"name": "for alice", "owner_id": aliceID})
	if k["owner"] != "alice" {
		t.Errorf("owner %v", k["owner"])
	}
	if r := alice.do("POST", "/console/api/keys", map[string]any{"name": "for admin", "owner_id": 1}); r.status != 403 {
		t.Errorf("user issuing a key for another: %d", r.status)
	}
	list := alice.must("GET", "/console/api/keys", nil)["keys"].([]any)
	if len(list) != 1 {
		t.Errorf("alice's keys: %v", list)
	}
}

func TestKeyModels(t *testing.T) {
	e := newEnv(t)
	u := e.user("alice")
	k := u.must("POST", "/console/api/keys", map[string]any{"name": "a", "models": []string{"demo", "gpt-*"}})
	m := u.must("GET", "/console/api/keys/"+strconv.Itoa(int(k["id"].(float64)))+"/models", nil)
	models := m["models"].([]any)
	// The fake gateway names its one model after the allow-list it got.
	if len(models) != 1 || models[0].(map[string]any)["name"] != "demo+gpt-*" {
		t.Errorf("models: %v", m)
	}
}

func TestPlaygroundServesAsTheKey(t *testing.T) {
	e := newEnv(t)
	u := e.user("alice")
	id, _ := u.createKey("play")
	body := `{"model":"demo","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	r := u.do("POST", "/console/api/playground/"+strconv.FormatInt(id, 10)+"/v1beta/models/demo:streamGenerateContent?alt=sse",
		body, "Anthropic-Version", "2023-06-01")
	if r.status != 200 || !strings.HasPrefix(string(r.body), `data: {"part":1,"key":`+strconv.FormatInt(id, 10)+`}`) {
		t.Fatalf("playground reply: %d %s", r.status, r.body)
	}
	got := e.gw.servedCalls()[0]
	if got.keyID != id || got.uri != "/v1beta/models/demo:streamGenerateContent?alt=sse" || got.body != body {
		t.Errorf("gateway saw %+v", got)
	}
	if strings.Contains(got.cookie, sessionCookie) || got.csrf != "" || got.extra != "2023-06-01" {
		t.Errorf("headers passed on: cookie %q, csrf %q, anthropic-version %q", got.cookie, got.csrf, got.extra)
	}
	// The attempts come back, readable by the page's decodeURIComponent.
	if h, _ := url.PathUnescape(r.header.Get(attemptsHeader)); h != `[{"channel":"broken","status":502,"error":"connection refused to 127.0.0.1:1","duration_ms":3},{"channel":"demo","status":200,"duration_ms":1.5}]` {
		t.Errorf("%s: %q", attemptsHeader, r.header.Get(attemptsHeader))
	}
	for _, path := range []string{"/v1/embeddings", "/v1/images/generations", "/v1/audio/speech"} {
		if r := u.do("POST", "/console/api/playground/"+strconv.FormatInt(id, 10)+path, `{}`); r.status != 200 {
			t.Errorf("playground to %s: %d %s", path, r.status, r.body)
		}
	}
	for _, path := range []string{"/v1/models", "/console/api/keys", "/v1beta/models/", "/v1beta/models/../../v1/models", "/v1/audio/transcriptions"} {
		if r := u.do("POST", "/console/api/playground/"+strconv.FormatInt(id, 10)+path, body); r.status != 404 {
			t.Errorf("playground to %s: %d %s, want 404", path, r.status, r.body)
		}
	}
	if r := u.do("POST", "/console/api/playground/"+strconv.FormatInt(id, 10)+"/v1/messages", body, csrfHeader, ""); r.status != 403 {
		t.Errorf("playground without CSRF token: %d", r.status)
	}
	if n := len(e.gw.servedCalls()); n != 4 {
		t.Errorf("%d calls reached the gateway, want 4", n)
	}
}

func TestAllModels(t *testing.T) {
	e := newEnv(t)
	// A user with no key yet still learns what models there are.
	m := e.user("alice").must("GET", "/console/api/models", nil)
	if models := m["models"].([]any); len(models) != 1 || models[0].(map[string]any)["name"] != "*" {
		t.Errorf("models: %v", m)
	}
}

// TestPlaygroundResponses: the playground may create a response through
// the Responses API as the key, streamed or not, but not reach the calls
// on a stored response or its token count.
func TestPlaygroundResponses(t *testing.T) {
	e := newEnv(t)
	u := e.user("alice")
	id, _ := u.createKey("play")
	base := "/console/api/playground/" + strconv.FormatInt(id, 10)
	body := `{"model":"demo","stream":true,"input":"hi"}`
	if r := u.do("POST", base+"/v1/responses", body); r.status != 200 {
		t.Fatalf("playground to /v1/responses: %d %s", r.status, r.body)
	}
	calls := e.gw.servedCalls()
	if len(calls) != 1 || calls[0].keyID != id || calls[0].uri != "/v1/responses" || calls[0].body != body {
		t.Fatalf("gateway saw %+v", calls)
	}
	for _, path := range []string{"/v1/responses/resp_1", "/v1/responses/resp_1/cancel", "/v1/responses/input_tokens", "/v1/responses/"} {
		if r := u.do("POST", base+path, body); r.status != 404 {
			t.Errorf("playground to %s: %d %s, want 404", path, r.status, r.body)
		}
	}
	if n := len(e.gw.servedCalls()); n != 1 {
		t.Errorf("%d calls reached the gateway, want 1", n)
	}
}
