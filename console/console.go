// Package console is the gateway's web console: a small single-page app,
// embedded in the binary, and the JSON API behind it under /console/api/.
//
// People log in with a name and password (argon2id hashes in the store)
// and get a session cookie; state-changing calls must also carry the
// session's CSRF token in an X-CSRF-Token header. Users manage their own
// API keys, try them in the playground and read their usage; admins also
// see every key and manage users and channels.
//
// The console never sees a request path's internals: what it needs from
// the running gateway goes through the Gateway interface, and everything it
// keeps goes through store.Store.
package console

import (
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/netip"
	"path"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/store"
)

// Config is what a console is built from.
type Config struct {
	// Store keeps users, sessions, keys, console channels and usage.
	// Required.
	Store store.Store
	// Gateway is the running request path. Required.
	Gateway Gateway
	// PublicURL is the base URL clients reach the gateway at, shown on the
	// home page. Default: derived from each request's Host header.
	PublicURL string
	// Log receives errors the console could not answer well. Default:
	// slog.Default().
	Log *slog.Logger
	// SessionTTL is how long a login lasts. Default: 12h.
	SessionTTL time.Duration
	// LoginFailures is how many failed logins a client IP, and separately
	// a user name, may make per minute before getting 429s. Default: 5.
	LoginFailures int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client IP (see clientIP). Default: none.
	TrustedProxies []netip.Prefix
}

// Console serves the web console. Build it with New and mount it with
// Register.
type Console struct {
	st        store.Store
	gw        Gateway
	log       *slog.Logger
	publicURL string
	ttl       time.Duration
	byIP      *failures
	byName    *failures
	known     *knownClients  // exempt from byName
	proxies   []netip.Prefix // trusted to name the client in X-Forwarded-For
	ui        fs.FS
	now       func() time.Time // tests move the clock
}

//go:embed ui
var uiFiles embed.FS

// New checks cfg and builds a console.
func New(cfg Config) (*Console, error) {
	if cfg.Store == nil || cfg.Gateway == nil {
		return nil, errors.New("console: Config.Store and Config.Gateway are required")
	}
	c := &Console{
		st:        cfg.Store,
		gw:        cfg.Gateway,
		log:       cfg.Log,
		publicURL: strings.TrimSuffix(cfg.PublicURL, "/"),
		ttl:       cfg.SessionTTL,
		now:       time.Now,
		proxies:   cfg.TrustedProxies,
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.ttl <= 0 {
		c.ttl = 12 * time.Hour
	}
	if cfg.LoginFailures <= 0 {
		cfg.LoginFailures = 5
	}
	c.byIP = newFailures(cfg.LoginFailures, time.Minute)
	c.byName = newFailures(cfg.LoginFailures, time.Minute)
	c.known = newKnownClients(30*24*time.Hour, 100000)
	c.ui, _ = fs.Sub(uiFiles, "ui") // cannot fail: "ui" is embedded
	return c, nil
}

// Register mounts the console on r: the app at /console/, a redirect
// from /, and the API under /console/api/.
func (c *Console) Register(r *router.Router) {
	r.GET("/", redirectToConsole)
	// The router counts /console and /console/ as one path and redirects
	// the first to the second itself.
	r.GET("/console/", c.page)
	r.GET("/console/assets/{name}", c.asset)

	api := r.Group("/console/api")
	api.POST("/login", c.login)
	api.POST("/logout", c.user(c.logout))
	api.GET("/me", c.user(c.me))
	api.POST("/me/password", c.user(c.changePassword))

	api.GET("/users", c.admin(c.listUsers))
	api.POST("/users", c.admin(c.createUser))
	api.PATCH("/users/{id}", c.admin(c.updateUser))
	api.DELETE("/users/{id}", c.admin(c.deleteUser))

	api.GET("/keys", c.user(c.listKeys))
	api.POST("/keys", c.user(c.createKey))
	api.GET("/keys/{id}", c.user(c.getKey))
	api.PATCH("/keys/{id}", c.user(c.updateKey))
	api.POST("/keys/{id}/revoke", c.user(c.revokeKey))
	api.DELETE("/keys/{id}", c.user(c.deleteKey))
	api.GET("/keys/{id}/models", c.user(c.keyModels))
	api.GET("/models", c.user(c.allModels))

	api.GET("/channels", c.admin(c.listChannels))
	api.POST("/channels", c.admin(c.createChannel))
	api.PATCH("/channels/{name}", c.admin(c.updateChannel))
	api.DELETE("/channels/{name}", c.admin(c.deleteChannel))
	api.POST("/channels/{name}/test", c.admin(c.testChannel))

	api.GET("/usage", c.user(c.usageRows))
	api.GET("/usage/buckets", c.user(c.usageBuckets))
	api.GET("/usage/endpoints", c.user(c.usageEndpoints))
	api.GET("/usage/latency", c.user(c.usageLatency))

	api.POST("/playground/{id}/{path:*}", c.user(c.playground))
}

func redirectToConsole(ctx *fasthttp.RequestCtx) {
	ctx.Redirect("/console/", fasthttp.StatusFound)
}

// page serves the single page of the app; its views are URL fragments.
func (c *Console) page(ctx *fasthttp.RequestCtx) { c.serveFile(ctx, "index.html") }

func (c *Console) asset(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("name").(string)
	if name == "index.html" {
		ctx.Redirect("/console/", fasthttp.StatusFound)
		return
	}
	c.serveFile(ctx, name)
}

// contentSecurity allows nothing but the console's own files and calls, so
// that text shown in the console (key names, model replies) cannot run as
// script even if an escape were missed.
// The playground shows generated images as data: URLs and plays speech
// from blob: URLs.
const contentSecurity = "default-src 'self'; img-src 'self' data:; media-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// assetTypes are the content types of the files in ui/. A fixed table,
// not the system's mime.types: browsers refuse modules served with a
// non-script type, and that must not depend on the host.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

func (c *Console) serveFile(ctx *fasthttp.RequestCtx, name string) {
	b, err := fs.ReadFile(c.ui, name)
	if err != nil || strings.Contains(name, "/") {
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	typ, ok := assetTypes[path.Ext(name)]
	if !ok {
		typ = "application/octet-stream"
	}
	h := &ctx.Response.Header
	h.SetContentType(typ)
	// The files change with the binary; no-cache still lets the browser
	// keep them, revalidating each time.
	h.Set(fasthttp.HeaderCacheControl, "no-cache")
	h.Set("Content-Security-Policy", contentSecurity)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	ctx.SetBody(b)
}
