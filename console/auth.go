package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/store"
)

const (
	sessionCookie = "rosetta_session"
	csrfHeader    = "X-CSRF-Token"
)

// user wraps an API handler that any logged-in user may call.
func (c *Console) user(h func(*call) error) fasthttp.RequestHandler { return c.guard(false, h) }

// admin wraps an API handler that only admins may call.
func (c *Console) admin(h func(*call) error) fasthttp.RequestHandler { return c.guard(true, h) }

func (c *Console) guard(adminOnly bool, h func(*call) error) fasthttp.RequestHandler {
	return func(rc *fasthttp.RequestCtx) {
		withContext(func(ctx context.Context) {
			cl, err := c.authorize(ctx, rc, adminOnly)
			if err == nil {
				err = h(cl)
			}
			if err != nil {
				c.fail(rc, err)
			}
		})
	}
}

// authorize checks, in this order, the session (401), then for
// state-changing methods the Origin and the CSRF token (403), then the role
// (403).
func (c *Console) authorize(ctx context.Context, rc *fasthttp.RequestCtx, adminOnly bool) (*call, error) {
	sess, u, err := c.session(ctx, rc)
	if err != nil {
		return nil, err
	}
	if changesState(rc) {
		if err := c.checkOrigin(rc); err != nil {
			return nil, err
		}
		token := rc.Request.Header.Peek(csrfHeader)
		if len(token) == 0 || subtle.ConstantTimeCompare(token, []byte(sess.CSRF)) != 1 {
			return nil, errBadCSRF
		}
	}
	if adminOnly && u.Role != store.RoleAdmin {
		return nil, errAdminOnly
	}
	return &call{rc: rc, ctx: ctx, user: u, sess: sess}, nil
}

func changesState(ctx *fasthttp.RequestCtx) bool {
	return !ctx.IsGet() && !ctx.IsHead() && !ctx.IsOptions()
}

// session finds the caller's live session and its enabled user.
func (c *Console) session(ctx context.Context, rc *fasthttp.RequestCtx) (*store.Session, *store.User, error) {
	token := rc.Request.Header.Cookie(sessionCookie)
	if len(token) == 0 {
		return nil, nil, errNotLoggedIn
	}
	s, err := c.st.Session(ctx, sha256.Sum256(token))
	if errors.Is(err, store.ErrNotFound) || err == nil && !c.now().Before(s.Expires) {
		return nil, nil, errNotLoggedIn
	} else if err != nil {
		return nil, nil, err
	}
	u, err := c.st.User(ctx, s.UserID)
	if errors.Is(err, store.ErrNotFound) || err == nil && u.Disabled {
		return nil, nil, errNotLoggedIn
	} else if err != nil {
		return nil, nil, err
	}
	return s, u, nil
}

// checkOrigin refuses a browser request sent from another site. Requests
// without an Origin header (curl, older browsers on same-origin calls)
// still need the CSRF token, which another site cannot read.
func (c *Console) checkOrigin(ctx *fasthttp.RequestCtx) error {
	origin := string(ctx.Request.Header.Peek(fasthttp.HeaderOrigin))
	if origin == "" || origin == requestOrigin(ctx) || origin == originOf(c.publicURL) {
		return nil
	}
	return errCrossOrigin
}

// secure reports whether the browser reached us over TLS, directly or
// through a proxy that terminates it.
func secure(ctx *fasthttp.RequestCtx) bool {
	return ctx.IsTLS() || bytes.EqualFold(ctx.Request.Header.Peek("X-Forwarded-Proto"), []byte("https"))
}

func requestOrigin(ctx *fasthttp.RequestCtx) string {
	scheme := "http://"
	if secure(ctx) {
		scheme = "https://"
	}
	return scheme + string(ctx.Host())
}

// originOf is the scheme://host of a URL, "" when there is none.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// baseURL is the gateway's address as clients should spell it.
func (c *Console) baseURL(ctx *fasthttp.RequestCtx) string {
	if c.publicURL != "" {
		return c.publicURL
	}
	return requestOrigin(ctx)
}

type loginInput struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// meView is who is logged in, with what the app needs to start.
type meView struct {
	User      userView `json:"user"`
	CSRF      string   `json:"csrf"`
	PublicURL string   `json:"public_url"`
}

func (c *Console) login(rc *fasthttp.RequestCtx) {
	withContext(func(ctx context.Context) {
		if err := c.tryLogin(ctx, rc); err != nil {
			c.fail(rc, err)
		}
	})
}

func (c *Console) tryLogin(ctx context.Context, rc *fasthttp.RequestCtx) error {
	if err := c.checkOrigin(rc); err != nil {
		return err
	}
	var in loginInput
	if err := decode(rc, &in); err != nil {
		return err
	}
	switch {
	case in.Name == "":
		return badField("name", "enter your user name")
	case len(in.Name) > maxName:
		return badField("name", "no user name is longer than %d characters", maxName)
	case in.Password == "":
		return badField("password", "enter your password")
	case len(in.Password) > maxPassword:
		return badField("password", "no password is longer than %d bytes", maxPassword)
	}
	u, err := c.checkLogin(ctx, rc, in.Name, in.Password)
	if err != nil {
		return err
	}
	s, err := c.startSession(ctx, rc, u)
	if err != nil {
		return err
	}
	writeJSON(rc, fasthttp.StatusOK, c.meView(rc, u, s))
	return nil
}

// checkLogin verifies a name and password under the failure limits of the
// client IP (clientIP) and the name.
func (c *Console) checkLogin(ctx context.Context, rc *fasthttp.RequestCtx, name, password string) (*store.User, error) {
	ip, nameKey, now := c.clientIP(rc).String(), loginNameKey(name), c.now()
	known := c.known.has(nameKey, ip, now)
	wait := c.byIP.take(ip, now)
	if wait == 0 && !known {
		if wait = c.byName.take(nameKey, now); wait > 0 {
			c.byIP.undo(ip, now)
		}
	}
	if wait > 0 {
		rc.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		return nil, &apiError{Status: fasthttp.StatusTooManyRequests, Message: "too many failed logins; wait a minute and try again"}
	}
	u, err := c.st.UserByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		checkPassword(dummyHash(), password) //nolint:errcheck // only spends the time a real check takes
	} else if err != nil {
		return nil, err
	}
	ok := false
	if u != nil {
		if ok, err = checkPassword(u.PasswordHash, password); err != nil {
			return nil, err
		}
	}
	if !ok || u.Disabled {
		return nil, &apiError{Status: fasthttp.StatusUnauthorized, Message: "wrong user name or password"}
	}
	// A success is no failure; the name's earlier failures are forgiven,
	// the IP's are not (an attacker with one account must not reset it).
	c.byIP.undo(ip, now)
	c.byName.forget(nameKey)
	c.known.add(nameKey, ip, now)
	return u, nil
}

// loginNameKey is what the per-name limit counts under: a digest, so that
// a spray of long made-up names costs the limiter 32 bytes each.
func loginNameKey(name string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(name)))
	return string(sum[:])
}

// startSession stores a new session for u and sets its cookie. The cookie
// holds the only copy of the token; the store keeps its SHA-256.
func (c *Console) startSession(ctx context.Context, rc *fasthttp.RequestCtx, u *store.User) (*store.Session, error) {
	token, now := randomToken(), c.now()
	s := &store.Session{
		Hash:    sha256.Sum256([]byte(token)),
		UserID:  u.ID,
		CSRF:    randomToken(),
		Created: now,
		Expires: now.Add(c.ttl),
	}
	if err := c.st.CreateSession(ctx, s); err != nil {
		return nil, err
	}
	setSessionCookie(rc, token, s.Expires)
	return s, nil
}

// setSessionCookie sets the cookie, or deletes it when token is "".
func setSessionCookie(ctx *fasthttp.RequestCtx, token string, expires time.Time) {
	ck := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(ck)
	ck.SetKey(sessionCookie)
	ck.SetValue(token)
	ck.SetPath("/console")
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	ck.SetSecure(secure(ctx))
	if token == "" {
		expires = fasthttp.CookieExpireDelete
	}
	ck.SetExpire(expires)
	ctx.Response.Header.SetCookie(ck)
}

func (c *Console) meView(ctx *fasthttp.RequestCtx, u *store.User, s *store.Session) meView {
	return meView{User: viewUser(u), CSRF: s.CSRF, PublicURL: c.baseURL(ctx)}
}

func (c *Console) me(cl *call) error {
	return cl.reply(c.meView(cl.rc, cl.user, cl.sess))
}

func (c *Console) logout(cl *call) error {
	if err := c.st.DeleteSession(cl.ctx, cl.sess.Hash); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	setSessionCookie(cl.rc, "", time.Time{})
	return cl.reply(struct{}{})
}

type passwordInput struct {
	Current  string `json:"current_password"`
	Password string `json:"password"`
}

// changePassword sets the caller's password. Every session of the user
// ends, other browsers included, and this one gets a fresh session.
func (c *Console) changePassword(cl *call) error {
	var in passwordInput
	if err := decode(cl.rc, &in); err != nil {
		return err
	}
	if err := checkPasswordRule("password", in.Password); err != nil {
		return err
	}
	if _, err := c.checkLogin(cl.ctx, cl.rc, cl.user.Name, in.Current); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == fasthttp.StatusUnauthorized {
			return badField("current_password", "the current password is wrong")
		}
		return err
	}
	cl.user.PasswordHash = hashPassword(in.Password)
	if err := c.st.SetPassword(cl.ctx, cl.user.ID, cl.user.PasswordHash); err != nil {
		return err
	}
	if err := c.st.DeleteUserSessions(cl.ctx, cl.user.ID); err != nil {
		return err
	}
	s, err := c.startSession(cl.ctx, cl.rc, cl.user)
	if err != nil {
		return err
	}
	return cl.reply(c.meView(cl.rc, cl.user, s))
}
