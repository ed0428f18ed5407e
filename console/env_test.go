package console

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec/dialects"
	"github.com/rosetta-gateway/rosetta/store"
)

// The console API tests run the console on a real fasthttp server on
// loopback, over a real SQLite store in a temp dir, with a fake gateway
// that records what the console asked of it.

const adminPassword = "admin-password-1"

func TestMain(m *testing.M) {
	// argon2id at its production cost would make each login take tens of
	// milliseconds under -race; hashes record their parameters, so
	// verifying still goes through the same code.
	hashParams = argonParams{Time: 1, Memory: 64, Threads: 1}
	os.Exit(m.Run())
}

// fakeGateway stands in for the proxy.
type fakeGateway struct {
	mu              sync.Mutex
	changed         [][sha256.Size]byte
	channelsChanged int
	refuseChannels  map[string]error // ChannelsChanged skips these channels
	statuses        []ChannelStatus
	types           []string // ChannelTypes; nil means the registry's
	fleet           []FleetNode
	served          []servedCall
}

type servedCall struct {
	keyID               int64
	uri, body           string
	cookie, csrf, extra string
}

func (g *fakeGateway) Fleet() []FleetNode {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fleet
}

func (g *fakeGateway) KeyChanged(hash [sha256.Size]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.changed = append(g.changed, hash)
}

func (g *fakeGateway) ChannelsChanged(ctx context.Context) (map[string]error, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.channelsChanged++
	return g.refuseChannels, nil
}

func (g *fakeGateway) Models(models []string) []Model {
	return []Model{{Name: strings.Join(models, "+"), Channels: []ChannelStatus{{Name: "demo", Type: "demo", State: "closed"}}}}
}

func (g *fakeGateway) Channels() []ChannelStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ChannelStatus(nil), g.statuses...)
}

// ChannelTypes are the registry's types, unless a test set its own.
func (g *fakeGateway) ChannelTypes() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.types != nil {
		return slices.Clone(g.types)
	}
	return append(dialects.Names(), "demo")
}

// usageEndpoints are the fake gateway's endpoints, a few of the real ones.
var usageEndpoints = []string{"chat", "embeddings", "audio.speech"}

func (g *fakeGateway) UsageEndpoints() []string { return slices.Clone(usageEndpoints) }

func (g *fakeGateway) TestChannel(ctx context.Context, name string) (time.Duration, error) {
	if name == "broken" {
		return 0, errors.New("upstream said 500")
	}
	return 42 * time.Millisecond, nil
}

// failedOver are the attempts of a request that failed over.
var failedOver = []store.Attempt{
	{Channel: "broken", Status: 502, Error: "connection refused to 127.0.0.1:1", Duration: 3 * time.Millisecond},
	{Channel: "demo", Status: 200, Duration: 1500 * time.Microsecond},
}

// ServeAs records the call and streams back two events, as the gateway
// does, so the test sees the reply pass through unbuffered. Its attempts
// are a failed one and the one that answered.
func (g *fakeGateway) ServeAs(ctx *fasthttp.RequestCtx, key *store.Key) []store.Attempt {
	g.mu.Lock()
	g.served = append(g.served, servedCall{
		keyID: key.ID, uri: string(ctx.RequestURI()), body: string(ctx.PostBody()),
		cookie: string(ctx.Request.Header.Peek("Cookie")), csrf: string(ctx.Request.Header.Peek(csrfHeader)),
		extra: string(ctx.Request.Header.Peek("Anthropic-Version")),
	})
	g.mu.Unlock()
	ctx.SetContentType("text/event-stream")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		fmt.Fprintf(w, "data: {\"part\":1,\"key\":%d}\n\n", key.ID)
		w.Flush()
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	return failedOver
}

func (g *fakeGateway) reloads() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.channelsChanged
}

// refuse makes ChannelsChanged skip the named channels with their errors;
// nil refuses none.
func (g *fakeGateway) refuse(skipped map[string]error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuseChannels = skipped
}

func (g *fakeGateway) addStatus(st ChannelStatus) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.statuses = append(g.statuses, st)
}

func (g *fakeGateway) servedCalls() []servedCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]servedCall(nil), g.served...)
}

func (g *fakeGateway) forgetChanges() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.changed = nil
}

func (g *fakeGateway) keyChanged(h [sha256.Size]byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.changed {
		if c == h {
			return true
		}
	}
	return false
}

// env is one console with its store, fake gateway and server.
type env struct {
	t     *testing.T
	c     *Console
	st    store.Store
	gw    *fakeGateway
	base  string
	dbDir string

	mu  sync.Mutex
	now time.Time // the console's clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(dir, "rosetta.db"), store.Options{SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, dbDir: dir, now: time.Now(),
		gw: &fakeGateway{statuses: []ChannelStatus{{Name: "demo", Type: "demo", Source: "config", State: "closed", Requests: 3}}}}
	e.c, err = New(Config{Store: st, Gateway: e.gw, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e.c.now = e.clock
	if _, err := Bootstrap(ctx, st, adminPassword); err != nil {
		t.Fatal(err)
	}
	r := router.New()
	e.c.Register(r)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: r.Handler}
	go srv.Serve(ln) //nolint:errcheck // ends at Shutdown
	t.Cleanup(func() {
		srv.Shutdown() //nolint:errcheck
		st.Close()
	})
	e.base = "http://" + ln.Addr().String()
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

// browser is one client with its own cookies, calling from a loopback
// address of its own (127.0.0.0/8 all reach the server), so per-IP limits
// can be told apart.
type browser struct {
	e    *env
	http *http.Client
	csrf string
}

func (e *env) browser(ip string) *browser {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &browser{e: e, http: &http.Client{Jar: jar, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// reply is a response, its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (r *reply) json() map[string]any {
	var v map[string]any
	json.Unmarshal(r.body, &v) //nolint:errcheck // callers check the fields they need
	return v
}

// errorField is the field an error reply names.
func (r *reply) errorField() string {
	e, _ := r.json()["error"].(map[string]any)
	f, _ := e["field"].(string)
	return f
}

// do sends a request; body is JSON-encoded unless it is a string. Extra
// headers come as name, value pairs. State-changing calls carry the CSRF
// token unless the headers set X-CSRF-Token themselves.
func (b *browser) do(method, path string, body any, headers ...string) *reply {
	b.e.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		j, _ := json.Marshal(v)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.e.base+path, rd)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if method != "GET" {
		req.Header.Set(csrfHeader, b.csrf)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.http.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return &reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// login logs in and fails the test unless it worked.
func (b *browser) login(name, password string) *browser {
	b.e.t.Helper()
	r := b.do("POST", "/console/api/login", map[string]string{"name": name, "password": password})
	if r.status != 200 {
		b.e.t.Fatalf("login %s: %d %s", name, r.status, r.body)
	}
	b.csrf, _ = r.json()["csrf"].(string)
	return b
}

// must sends a request that has to succeed, and decodes its reply.
func (b *browser) must(method, path string, body any) map[string]any {
	b.e.t.Helper()
	r := b.do(method, path, body)
	if r.status != 200 {
		b.e.t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	return r.json()
}

func (e *env) admin() *browser { return e.browser("127.0.0.1").login(AdminName, adminPassword) }

// user creates a user through the admin API and logs them in.
func (e *env) user(name string) *browser {
	e.t.Helper()
	e.admin().must("POST", "/console/api/users", map[string]string{"name": name, "password": name + "-password"})
	return e.browser("127.0.0.1").login(name, name+"-password")
}

// createKey creates a key and returns its id and secret.
func (b *browser) createKey(name string) (int64, string) {
	b.e.t.Helper()
	k := b.must("POST", "/console/api/keys", map[string]any{"name": name})
	return int64(k["id"].(float64)), k["secret"].(string)
}
