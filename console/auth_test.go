package console

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

func TestLoginAndLogout(t *testing.T) {
	e := newEnv(t)
	b := e.browser("127.0.0.1")
	if r := b.do("GET", "/console/api/me", nil); r.status != 401 {
		t.Fatalf("me before login: %d, want 401", r.status)
	}
	r := b.do("POST", "/console/api/login", map[string]string{"name": AdminName, "password": adminPassword})
	if r.status != 200 {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	b.csrf = r.json()["csrf"].(string)
	ck := sessionCookieOf(t, r)
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/console" || ck.Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/console, not Secure over plain HTTP", ck)
	}
	// Only the hash of the cookie is in the store.
	s, err := e.st.Session(context.Background(), sha256.Sum256([]byte(ck.Value)))
	if err != nil {
		t.Fatalf("no session stored under the cookie's hash: %v", err)
	}
	if s.CSRF != b.csrf || !s.Expires.After(time.Now().Add(11*time.Hour)) {
		t.Errorf("session %+v: csrf %q, want the token sent and 12h of life", s, b.csrf)
	}

	me := b.must("GET", "/console/api/me", nil)
	if me["user"].(map[string]any)["name"] != AdminName || me["public_url"] != e.base {
		t.Errorf("me: %v", me)
	}
	if r := b.do("POST", "/console/api/logout", nil); r.status != 200 || !sessionCookieOf(t, r).Expires.Before(time.Now()) {
		t.Fatalf("logout: %d, cookie %+v (want it deleted)", r.status, sessionCookieOf(t, r))
	}
	if r := b.do("GET", "/console/api/me", nil); r.status != 401 {
		t.Errorf("me after logout: %d", r.status)
	}
	// Replaying the old cookie does not bring the session back.
	replay := e.browser("127.0.0.1")
	if r := replay.do("GET", "/console/api/me", nil, "Cookie", sessionCookie+"="+ck.Value); r.status != 401 {
		t.Errorf("old cookie after logout: %d", r.status)
	}
}

func sessionCookieOf(t *testing.T, r *reply) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == sessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", sessionCookie, r.header)
	return nil
}

func TestWrongPassword(t *testing.T) {
	e := newEnv(t)
	b := e.browser("127.0.0.1")
	wrong := b.do("POST", "/console/api/login", map[string]string{"name": AdminName, "password": "nope-nope"})
	unknown := b.do("POST", "/console/api/login", map[string]string{"name": "nobody", "password": "nope-nope"})
	if wrong.status != 401 || unknown.status != 401 {
		t.Fatalf("wrong password %d, unknown user %d; want 401s", wrong.status, unknown.status)
	}
	// The two must not tell which user names exist.
	if string(wrong.body) != string(unknown.body) {
		t.Errorf("replies differ:\n%s\n%s", wrong.body, unknown.body)
	}
	if len(wrong.header.Values("Set-Cookie")) != 0 {
		t.Error("a failed login set a cookie")
	}
}

func TestSessionExpires(t *testing.T) {
	e := newEnv(t)
	b := e.admin()
	e.advance(11 * time.Hour)
	b.must("GET", "/console/api/me", nil)
	e.advance(time.Hour + time.Second)
	if r := b.do("GET", "/console/api/me", nil); r.status != 401 {
		t.Fatalf("me 12h after login: %d, want 401", r.status)
	}
}

func TestLoginRateLimitedPerIP(t *testing.T) {
	e := newEnv(t)
	b := e.browser("127.0.0.2")
	// Five failures from one IP, each for another name.
	for i := range 5 {
		if r := b.do("POST", "/console/api/login", map[string]string{"name": "user" + strconv.Itoa(i), "password": "guess-guess"}); r.status != 401 {
			t.Fatalf("failure %d: %d", i, r.status)
		}
	}
	// Even the right password is refused now, before it is checked.
	r := b.do("POST", "/console/api/login", map[string]string{"name": AdminName, "password": adminPassword})
	wait, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || wait < 1 || wait > 60 {
		t.Fatalf("6th try from one IP: %d, Retry-After %q; want 429 with 1..60", r.status, r.header.Get("Retry-After"))
	}
	e.browser("127.0.0.3").login(AdminName, adminPassword) // other IPs are not affected
	e.advance(61 * time.Second)
	b.login(AdminName, adminPassword) // and the limit passes
}

func TestLoginRateLimitedPerName(t *testing.T) {
	e := newEnv(t)
	e.user("bob")
	// Five failures for bob, each from its own address.
	for i := range 5 {
		ip := "127.0.0." + strconv.Itoa(10+i)
		if r := e.browser(ip).do("POST", "/console/api/login", map[string]string{"name": "Bob", "password": "guess-guess"}); r.status != 401 {
			t.Fatalf("failure %d: %d", i, r.status)
		}
	}
	fresh := e.browser("127.0.0.20")
	if r := fresh.do("POST", "/console/api/login", map[string]string{"name": "bob", "password": "bob-password"}); r.status != 429 {
		t.Fatalf("bob from a fresh IP after 5 failures: %d, want 429", r.status)
	}
	// The limit is on the name, not on the fresh IP.
	fresh.login(AdminName, adminPassword)
	// Nor does it lock bob out where he logged in before (e.user logged
	// him in from 127.0.0.1): guesses at his name from elsewhere cannot.
	e.browser("127.0.0.1").login("bob", "bob-password")
}

func TestCSRFAndOrigin(t *testing.T) {
	e := newEnv(t)
	b := e.admin()
	body := map[string]any{"name": "k"}
	f := func(name string, want int, headers ...string) {
		t.Helper()
		if r := b.do("POST", "/console/api/keys", body, headers...); r.status != want {
			t.Errorf("%s: %d %s, want %d", name, r.status, r.body, want)
		}
	}
	f("no token", 403, csrfHeader, "")
	f("wrong token", 403, csrfHeader, b.csrf+"x")
	f("another session's token", 403, csrfHeader, e.admin().csrf)
	f("right token, foreign origin", 403, "Origin", "https://evil.example")
	f("right token, own origin", 200, "Origin", e.base)
	f("right token, no origin", 200)
	// Reading needs no token.
	if r := b.do("GET", "/console/api/keys", nil, csrfHeader, ""); r.status != 200 {
		t.Errorf("GET without token: %d", r.status)
	}
	// Logout changes state too.
	if r := b.do("POST", "/console/api/logout", nil, csrfHeader, ""); r.status != 403 {
		t.Errorf("logout without token: %d", r.status)
	}
	// A login form posted from another site is refused.
	r := e.browser("127.0.0.1").do("POST", "/console/api/login",
		map[string]string{"name": AdminName, "password": adminPassword}, "Origin", "https://evil.example")
	if r.status != 403 {
		t.Errorf("cross-site login: %d", r.status)
	}
}

func TestAdminOnlyRoutes(t *testing.T) {
	e := newEnv(t)
	u := e.user("alice")
	for _, rt := range []struct{ method, path string }{
		{"GET", "/console/api/users"},
		{"POST", "/console/api/users"},
		{"PATCH", "/console/api/users/1"},
		{"DELETE", "/console/api/users/1"},
		{"GET", "/console/api/channels"},
		{"POST", "/console/api/channels"},
		{"PATCH", "/console/api/channels/demo"},
		{"DELETE", "/console/api/channels/demo"},
		{"POST", "/console/api/channels/demo/test"},
	} {
		if r := u.do(rt.method, rt.path, `{}`); r.status != 403 || !strings.Contains(string(r.body), "admin") {
			t.Errorf("%s %s as a user: %d %s, want 403", rt.method, rt.path, r.status, r.body)
		}
	}
	// Not logged in at all is 401, not 403.
	if r := e.browser("127.0.0.1").do("GET", "/console/api/users", nil); r.status != 401 {
		t.Errorf("users without a session: %d", r.status)
	}
}

func TestUsersLifecycle(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	carol := e.user("carol")
	id, _ := carol.createKey("carol's")
	k, _ := e.st.Key(context.Background(), id)
	users := a.must("GET", "/console/api/users", nil)["users"].([]any)
	if len(users) != 2 {
		t.Fatalf("users: %v", users)
	}
	carolID := int64(users[1].(map[string]any)["id"].(float64))
	path := "/console/api/users/" + strconv.FormatInt(carolID, 10)

	// Disabling logs carol out at once and stops her keys.
	a.must("PATCH", path, map[string]any{"disabled": true})
	if !e.gw.keyChanged(k.Hash) {
		t.Error("KeyChanged not called for the disabled user's key")
	}
	if k, _ := e.st.KeyByHash(context.Background(), k.Hash); k.Usable(time.Now()) {
		t.Error("the disabled user's key is usable")
	}
	if keys := a.must("GET", "/console/api/keys", nil)["keys"].([]any); keys[0].(map[string]any)["usable"] != false {
		t.Errorf("the disabled user's key is listed as usable: %v", keys[0])
	}
	e.gw.forgetChanges()
	if r := carol.do("GET", "/console/api/me", nil); r.status != 401 {
		t.Errorf("disabled user's session: %d", r.status)
	}
	if r := e.browser("127.0.0.1").do("POST", "/console/api/login", map[string]string{"name": "carol", "password": "carol-password"}); r.status != 401 {
		t.Errorf("disabled user logs in: %d", r.status)
	}
	// Re-enabled with a new password, the new one works.
	a.must("PATCH", path, map[string]any{"disabled": false, "password": "carol-new-password", "role": "admin"})
	c2 := e.browser("127.0.0.1").login("carol", "carol-new-password")
	if !e.gw.keyChanged(k.Hash) {
		t.Error("KeyChanged not called for the re-enabled user's key")
	}
	if k, _ := e.st.KeyByHash(context.Background(), k.Hash); !k.Usable(time.Now()) {
		t.Error("the re-enabled user's key is not usable")
	}
	if c2.must("GET", "/console/api/me", nil)["user"].(map[string]any)["role"] != "admin" {
		t.Error("role not changed")
	}

	// An admin cannot lock themself out.
	me := a.must("GET", "/console/api/me", nil)["user"].(map[string]any)
	self := "/console/api/users/" + strconv.Itoa(int(me["id"].(float64)))
	for _, tc := range []struct {
		method, field string
		body          any
	}{
		{"PATCH", "role", map[string]any{"role": "user"}},
		{"PATCH", "disabled", map[string]any{"disabled": true}},
		{"DELETE", "id", nil},
	} {
		if r := a.do(tc.method, self, tc.body); r.status != 400 || r.errorField() != tc.field {
			t.Errorf("%s self %v: %d %s", tc.method, tc.body, r.status, r.body)
		}
	}

	// Deleting carol deletes her keys, and the gateway hears of it.
	a.must("DELETE", path, nil)
	if !e.gw.keyChanged(k.Hash) {
		t.Error("KeyChanged not called for the deleted user's key")
	}
	if _, err := e.st.Key(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("key of the deleted user: %v", err)
	}
	if r := a.do("DELETE", path, nil); r.status != 404 {
		t.Errorf("deleting twice: %d", r.status)
	}
}

func TestChangePassword(t *testing.T) {
	e := newEnv(t)
	u := e.user("dave")
	other := e.browser("127.0.0.1").login("dave", "dave-password")
	if r := u.do("POST", "/console/api/me/password", map[string]string{"current_password": "wrong-wrong", "password": "dave-new-password"}); r.status != 400 || r.errorField() != "current_password" {
		t.Fatalf("wrong current password: %d %s", r.status, r.body)
	}
	me := u.must("POST", "/console/api/me/password", map[string]string{"current_password": "dave-password", "password": "dave-new-password"})
	u.csrf = me["csrf"].(string)
	u.must("GET", "/console/api/me", nil) // this browser got a new session
	if r := other.do("GET", "/console/api/me", nil); r.status != 401 {
		t.Errorf("other session after a password change: %d", r.status)
	}
	e.browser("127.0.0.1").login("dave", "dave-new-password")
}

func TestBootstrap(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t) // bootstrapped with adminPassword
	if gen, err := Bootstrap(ctx, e.st, ""); gen != "" || err != nil {
		t.Errorf("second bootstrap: %q, %v; want nothing done", gen, err)
	}
	users, _ := e.st.Users(ctx)
	if len(users) != 1 || users[0].Role != store.RoleAdmin || strings.Contains(users[0].PasswordHash, adminPassword) {
		t.Errorf("users after bootstrap: %+v", users)
	}

	empty, err := store.Open(ctx, "sqlite", t.TempDir()+"/empty.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if _, err := Bootstrap(ctx, empty, "short"); err == nil || !strings.Contains(err.Error(), "ROSETTA_ADMIN_PASSWORD") {
		t.Errorf("short password: %v", err)
	}
	gen, err := Bootstrap(ctx, empty, "")
	if err != nil || len(gen) != 20 {
		t.Fatalf("generated password %q, %v", gen, err)
	}
	u, _ := empty.UserByName(ctx, AdminName)
	if ok, _ := checkPassword(u.PasswordHash, gen); !ok {
		t.Error("the generated password does not log in")
	}
}

// Logins sent all at once are counted before their passwords are checked,
// so no more of them are checked than the limit allows.
func TestParallelLoginsKeepTheLimit(t *testing.T) {
	e := newEnv(t)
	b := e.browser("127.0.0.4")
	const n = 30
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- b.do("POST", "/console/api/login", map[string]string{"name": "user" + strconv.Itoa(i), "password": "guess-guess"}).status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[401] != 5 || count[429] != n-5 {
		t.Fatalf("statuses of %d parallel failed logins: %v; want 5 × 401, the rest 429", n, count)
	}
}

func TestOverlongLoginIsRefusedUnhashed(t *testing.T) {
	e := newEnv(t)
	b := e.browser("127.0.0.5")
	for _, tc := range []struct{ field, name, password string }{
		{"name", strings.Repeat("a", 65), "guess-guess"},
		{"password", "admin", strings.Repeat("p", 1025)},
	} {
		r := b.do("POST", "/console/api/login", map[string]string{"name": tc.name, "password": tc.password})
		if r.status != 400 || r.errorField() != tc.field {
			t.Errorf("overlong %s: %d %s", tc.field, r.status, r.body)
		}
	}
	if len(e.c.byName.seen) != 0 || len(e.c.byIP.seen) != 0 {
		t.Error("an overlong login was counted by the limiter")
	}
}
