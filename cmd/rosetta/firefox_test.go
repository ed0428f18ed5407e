package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The console in Firefox, driven over WebDriver BiDi (the W3C protocol
// Firefox serves itself, so no driver binary is needed): the new user's
// path of the Chromium test, in the other engine the console must work in.

func firefox(t *testing.T) string { return findBrowser(t, "firefox", "firefox-esr", "firefox") }

// bidi is a WebDriver BiDi session with one browsing context (the tab).
type bidi struct {
	t     *testing.T
	conn  *websocket.Conn
	next  int
	tab   string
	shots string
	n     int
	// errs are the errors the page logged or threw (log.entryAdded
	// events), but the 401 of asking who is logged in before anyone is.
	errs []string
}

// ffPrefs keep a headless Firefox off the network it cannot reach here
// and away from first-run pages.
const ffPrefs = `user_pref("app.update.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("browser.safebrowsing.update.enabled", false);
user_pref("extensions.update.enabled", false);
user_pref("services.settings.server", "http://127.0.0.1:9/");
user_pref("dom.events.asyncClipboard.readText", true);
`

func startFirefox(t *testing.T) *bidi {
	profile := t.TempDir()
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(ffPrefs), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(firefox(t), "--headless", "--no-remote", "--profile", profile,
		"--remote-debugging-port", "0", "--window-size", "1280,900", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "WebDriver BiDi listening on "); ok {
				found <- url
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("firefox did not start its WebDriver BiDi server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url+"/session", nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20) // screenshots
	t.Cleanup(func() { conn.CloseNow() })
	b := &bidi{t: t, conn: conn, shots: artifacts(t)}
	b.call("session.new", map[string]any{"capabilities": map[string]any{}})
	var tree struct {
		Contexts []struct{ Context string } `json:"contexts"`
	}
	b.result(b.call("browsingContext.getTree", map[string]any{}), &tree)
	if len(tree.Contexts) == 0 {
		t.Fatal("firefox has no tab")
	}
	b.tab = tree.Contexts[0].Context
	b.call("session.subscribe", map[string]any{"events": []string{"log.entryAdded"}})
	return b
}

// call sends a command and returns its result, failing the test on an
// error reply. Events (none are subscribed to) are skipped.
func (b *bidi) call(method string, params any) json.RawMessage {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b.next++
	msg, _ := json.Marshal(map[string]any{"id": b.next, "method": method, "params": params})
	if err := b.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
	for {
		_, data, err := b.conn.Read(ctx)
		if err != nil {
			b.t.Fatalf("%s: %v", method, err)
		}
		var reply struct {
			ID      int             `json:"id"`
			Type    string          `json:"type"`
			Method  string          `json:"method"`
			Params  logEntry        `json:"params"`
			Result  json.RawMessage `json:"result"`
			Error   string          `json:"error"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(data, &reply) != nil {
			continue
		}
		if reply.Type == "event" && reply.Method == "log.entryAdded" && reply.Params.Level == "error" &&
			!strings.Contains(reply.Params.Text, "/console/api/me") {
			b.errs = append(b.errs, reply.Params.Text)
		}
		if reply.ID != b.next {
			continue
		}
		if reply.Type != "success" {
			b.t.Fatalf("%s: %s: %s", method, reply.Error, reply.Message)
		}
		return reply.Result
	}
}

// logEntry is the part of a log.entryAdded event the test reads.
type logEntry struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

func (b *bidi) result(raw json.RawMessage, v any) {
	b.t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		b.t.Fatalf("reply %s: %v", raw, err)
	}
}

func (b *bidi) navigate(url string) {
	b.t.Helper()
	b.call("browsingContext.navigate", map[string]any{"context": b.tab, "url": url, "wait": "complete"})
}

// eval runs a JavaScript expression in the tab (awaiting a promise) and
// returns its value as JSON.
func (b *bidi) eval(expr string) json.RawMessage {
	b.t.Helper()
	var r struct {
		Type   string `json:"type"`
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.result(b.call("script.evaluate", map[string]any{
		"expression": expr, "target": map[string]any{"context": b.tab}, "awaitPromise": true,
	}), &r)
	if r.Type == "exception" {
		b.t.Fatalf("evaluate %s: %s", expr, r.ExceptionDetails.Text)
	}
	return r.Result.Value
}

func (b *bidi) evalString(expr string) string {
	b.t.Helper()
	var s string
	b.result(b.eval(expr), &s)
	return s
}

// waitJS waits until a JavaScript expression is truthy.
func (b *bidi) waitJS(what, expr string) {
	b.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if string(b.eval("!!("+expr+")")) == "true" {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// do runs JavaScript that acts on the page (clicks, typing).
func (b *bidi) do(js string) { b.t.Helper(); b.eval("(() => { " + js + " })()") }

// typeInto sets a control's value as typing does, with the input event
// the app listens for.
func (b *bidi) typeInto(sel, text string) {
	b.t.Helper()
	b.do(fmt.Sprintf(`const el = document.querySelector(%q); el.focus(); el.value = %q;
el.dispatchEvent(new Event('input', {bubbles: true}));`, sel, text))
}

func (b *bidi) click(sel string) {
	b.t.Helper()
	b.waitJS(sel, fmt.Sprintf(`document.querySelector(%q)`, sel))
	b.do(fmt.Sprintf(`document.querySelector(%q).click();`, sel))
}

func (b *bidi) page(name, title string) {
	b.t.Helper()
	b.click(fmt.Sprintf(`#nav a[href="#/%s"]`, name))
	b.waitJS("open "+name, fmt.Sprintf(`document.querySelector('#main h1')?.textContent === %q`, title))
}

func (b *bidi) shot(name string) {
	b.t.Helper()
	var r struct{ Data string }
	b.result(b.call("browsingContext.captureScreenshot", map[string]any{"context": b.tab, "origin": "document"}), &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	b.n++
	if err := os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("firefox-%02d-%s.png", b.n, name)), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func TestConsoleInFirefox(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "rosetta.yaml")
	os.WriteFile(config, []byte(`
store: {driver: sqlite, dsn: "`+filepath.Join(dir, "rosetta.db")+`"}
channels:
  - {name: demo, type: demo, models: [demo], pace: 25ms}
`), 0o600)
	base := start(t, config, "ROSETTA_ADMIN_PASSWORD="+browserAdminPassword)
	b := startFirefox(t)
	t.Cleanup(func() { keepScreenshots(t, b.shots) })

	b.navigate(base + "/")
	b.waitJS("login form", `document.querySelector('form[aria-label="Log in"]')`)
	b.typeInto(`input[name=name]`, "admin")
	b.typeInto(`input[name=password]`, browserAdminPassword)
	b.click(`form[aria-label="Log in"] button[type=submit]`)
	b.waitJS("home page", `document.querySelector('input[data-style=openai]')`)
	if got := b.evalString(`document.querySelector('input[data-style=openai]').value`); got != base+"/v1" {
		t.Errorf("OpenAI base URL %q, want %q", got, base+"/v1")
	}
	b.shot("home")

	b.page("keys", "Keys")
	b.typeInto(`form[aria-label="Create a key"] input[name=name]`, "firefox-key")
	b.click(`form[aria-label="Create a key"] button[type=submit]`)
	b.waitJS("secret shown", `document.querySelector('input[data-secret]')?.value`)
	secret := b.evalString(`document.querySelector('input[data-secret]').value`)
	if !regexp.MustCompile(`^sk-rst-[0-9A-Za-z]{40}$`).MatchString(secret) {
		t.Fatalf("secret %q", secret)
	}
	b.shot("keys-created")
	b.click(`.secret .actions button`)
	useKey(t, base, secret, http.StatusOK)

	b.page("playground", "Playground")
	b.waitJS("model list", `document.querySelector('select[name=model]')?.value === 'demo'`)
	b.eval(recordReplies)
	b.typeInto(`textarea[name=message]`, "hello from firefox")
	b.click(`form[aria-label="Send a message"] button[type=submit]`)
	b.waitJS("reply", `document.querySelector('.stats')?.textContent.includes('output tokens') && !document.querySelector('[aria-busy]')`)
	final := b.evalString(`[...document.querySelectorAll('.msg.assistant .text')].pop().textContent`)
	if !strings.HasPrefix(final, "Hello from the Rosetta demo model.") || !strings.Contains(final, "hello from firefox") {
		t.Errorf("reply %q", final)
	}
	var seen []string
	b.result(json.RawMessage(b.evalString(`JSON.stringify(window.seen)`)), &seen)
	partial := 0
	for _, s := range seen {
		if s != "" && len(s) < len(final) && strings.HasPrefix(final, s) {
			partial++
		}
	}
	if partial < 3 {
		t.Errorf("%d partial texts before the final one: the reply did not stream in (seen %s)", partial, strconv.Quote(strings.Join(seen, "|")))
	}
	b.shot("playground")

	b.page("usage", "Usage")
	b.waitJS("request log", `document.querySelector('section[aria-labelledby=raw-log]')`)
	b.shot("usage")
	b.click(`#logout`)
	b.waitJS("logged out", `document.querySelector('form[aria-label="Log in"]')`)
	if len(b.errs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(b.errs, "\n"))
	}
}
