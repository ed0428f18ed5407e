package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// The console in a real browser: headless Chromium, driven over the
// DevTools protocol, against the real binary with a SQLite store. It walks
// the path a new user takes (log in, copy the base URL, create a key, chat
// in the playground, read the usage, revoke the key) and saves a
// screenshot of every page.

const browserAdminPassword = "browser-test-password"

func chromium(t *testing.T) string {
	return findBrowser(t, "chromium", "chromium", "chromium-browser", "/usr/bin/chromium")
}

// findBrowser finds a browser by its commands. Without one the test fails
// under CI (make test installs it) and is skipped elsewhere.
func findBrowser(t *testing.T, name string, commands ...string) string {
	for _, c := range commands {
		if path, err := exec.LookPath(c); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(name + " is not installed; make test installs it (scripts/test-deps.sh)")
	}
	t.Skip(name + " is not installed; run scripts/test-deps.sh")
	return ""
}

// artifacts is where screenshots go: $ROSETTA_ARTIFACTS, or a temp dir.
func artifacts(t *testing.T) string {
	dir := os.Getenv("ROSETTA_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tab is a browser tab the test drives; each helper fails the test on
// error.
type tab struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
	n     int
}

func newTab(t *testing.T, base string) *tab {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("cannot start chromium: %v", err)
	}
	return &tab{t: t, ctx: ctx, base: base, shots: artifacts(t)}
}

// do runs actions with a deadline, so a missing element fails the test
// instead of hanging it.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

func (b *tab) typeInto(sel, text string) {
	b.t.Helper()
	b.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), text, chromedp.NodeVisible))
}

// waitJS waits until a JavaScript expression is truthy.
func (b *tab) waitJS(what, expr string) {
	b.t.Helper()
	b.do(what, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
}

func evalJS[T any](b *tab, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// page follows a navigation link, waits for the page's heading and checks
// that every control on it has an accessible name.
func (b *tab) page(name, title string) {
	b.t.Helper()
	b.click(fmt.Sprintf(`#nav a[href="#/%s"]`, name))
	b.waitJS("open "+name, fmt.Sprintf(`document.querySelector('#main h1')?.textContent === %q`, title))
	if bad := evalJS[[]string](b, unlabeled); len(bad) > 0 {
		b.t.Errorf("%s page: controls without an accessible name: %q", name, bad)
	}
}

// unlabeled lists the visible controls that have no accessible name: no
// <label for>, no wrapping label, no aria-label(ledby), no text, no title.
const unlabeled = `[...document.querySelectorAll('input, select, textarea, button, a[href]')]
  .filter(el => el.offsetParent !== null && el.type !== 'hidden')
  .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') &&
    !el.getAttribute('aria-labelledby') && !el.textContent.trim() && !el.title)
  .map(el => el.outerHTML.slice(0, 80))`

// shot saves a PNG of the whole page.
func (b *tab) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.n++
	path := filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// pageErrors collects what the page logs as an error or throws, so that
// a broken script fails the test even where the assertions would not see
// it.
func pageErrors(ctx context.Context) func() []string {
	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// The app asks who is logged in before anyone is: that 401
			// is expected, as is the 502 of the playground's chat to the
			// broken channel (brokenTurn) and the 400 of a key edit with
			// a negative limit (keyLimitsInBrowser).
			expected := strings.HasSuffix(m.URL, "/console/api/me") && strings.Contains(m.Text, "401") ||
				strings.Contains(m.URL, "/console/api/playground/") && strings.Contains(m.Text, "502") ||
				strings.Contains(m.URL, "/console/api/keys/") && strings.Contains(m.Text, "400")
			if m.IsException() || m.Type == chromedp.ConsoleError && !expected {
				mu.Lock()
				errs = append(errs, m.String()+" at "+m.URL+":"+strconv.FormatInt(m.Line+1, 10))
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), errs...)
	}
}

func TestConsoleInBrowser(t *testing.T) {
	began := time.Now()
	dir := t.TempDir()
	config := filepath.Join(dir, "rosetta.yaml")
	os.WriteFile(config, []byte(`
store: {driver: sqlite, dsn: "`+filepath.Join(dir, "rosetta.db")+`"}
channels:
  - {name: demo, type: demo, models: [demo], pace: 25ms}
`), 0o600)
	base := start(t, config, "ROSETTA_ADMIN_PASSWORD="+browserAdminPassword)
	b := newTab(t, base)
	errs := pageErrors(b.ctx)
	t.Cleanup(func() {
		t.Logf("browser test took %s; screenshots in %s", time.Since(began).Round(time.Millisecond), b.shots)
		keepScreenshots(t, b.shots)
	})

	login(b)
	geminiBase := homeBaseURLs(b)
	homeSnippets(b)
	copyBaseURL(b)
	secret := createKey(b)
	keysRefresh(b, secret)
	useKey(t, base, secret, http.StatusOK)
	geminiSDK(t, geminiBase, secret)
	b.page("models", "Models")
	b.waitJS("models table", `document.querySelector('#main table')?.textContent.includes('demo')`)
	b.shot("models")
	channelsPage(b)
	playground(b)
	usagePage(b)
	openCircuit(b)
	b.page("users", "Users")
	b.waitJS("users table", `document.querySelector('#main table')?.textContent.includes('admin')`)
	b.shot("users")
	b.page("account", "Account")
	b.shot("account")
	phone(b)
	revoke(b, base, secret)
	b.page("playground", "Playground")
	b.waitJS("no active key", `document.querySelector('#main .notice')?.textContent.startsWith('None of your keys is active: your key is revoked or expired.')`)
	userSecret := plainUser(b)
	disableUser(b, base, userSecret)
	keyLimitsInBrowser(b)
	if e := errs(); len(e) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(e, "\n"))
	}
}

func login(b *tab) {
	b.do("open the console", chromedp.Navigate(b.base+"/"))
	b.waitJS("login form", `!!document.querySelector('form[aria-label="Log in"]')`)
	if u := evalJS[string](b, `location.pathname`); u != "/console/" {
		b.t.Errorf("/ led to %s, want /console/", u)
	}
	b.shot("login")
	logInAs(b, "admin", browserAdminPassword)
	b.waitJS("home page", `!!document.querySelector('input[data-style=openai]')`)
	b.shot("home")
}

// logInAs fills the login form, which must be showing, and waits for the
// app to show the user (on the page the address names).
func logInAs(b *tab, name, password string) {
	b.t.Helper()
	b.typeInto(`input[name=name]`, name)
	b.typeInto(`input[name=password]`, password)
	b.click(`form[aria-label="Log in"] button[type=submit]`)
	b.waitJS("logged in as "+name, fmt.Sprintf(`document.querySelector('#whoami')?.textContent.startsWith(%q) && !document.querySelector('form[aria-label="Log in"]')`, name+" ("))
}

func logOut(b *tab) {
	b.t.Helper()
	b.click(`#logout`)
	b.waitJS("login form", `!!document.querySelector('form[aria-label="Log in"]')`)
}

const (
	plainUserName     = "dana"
	plainUserPassword = "dana-browser-password"
)

// plainUser adds a user who is not an admin and walks the console as her:
// no admin pages, none of the admin's keys or usage, a key of her own.
// It returns that key's secret, and ends logged in as the admin again.
func plainUser(b *tab) string {
	b.page("users", "Users")
	b.typeInto(`form[aria-label="Add a user"] input[name=name]`, plainUserName)
	b.typeInto(`form[aria-label="Add a user"] input[name=password]`, plainUserPassword)
	b.click(`form[aria-label="Add a user"] button[type=submit]`)
	b.waitJS("user listed", `document.querySelector('#main table')?.textContent.includes('`+plainUserName+`')`)
	logOut(b)
	logInAs(b, plainUserName, plainUserPassword)
	// She starts at Home, not on the admin's last page, and her snippets
	// name a model that answers though she has no key yet.
	b.waitJS("home after login", `document.querySelector('#main h1')?.textContent === 'Home'`)
	homeSnippets(b)

	for _, admin := range []string{"channels", "users"} {
		if evalJS[bool](b, fmt.Sprintf(`!document.querySelector('#nav a[href="#/%s"]').hidden`, admin)) {
			b.t.Errorf("a plain user sees the %s link", admin)
		}
		// Typed into the address bar, an admin page says it is for admins.
		b.do("open #/"+admin, chromedp.Evaluate[chromedp.Void](`location.hash = '#/`+admin+`'`))
		b.waitJS("admins only: "+admin, `document.querySelector('#main .notice')?.textContent.startsWith('Only an admin can open this page; you are logged in as `+plainUserName+`, a user.')`)
	}
	b.page("keys", "Keys")
	b.waitJS("keys table", `!!document.querySelector('#main table')`)
	if evalJS[bool](b, `document.querySelector('#main').textContent.includes('browser-key')`) {
		b.t.Error("a plain user sees the admin's key")
	}
	b.typeInto(`form[aria-label="Create a key"] input[name=name]`, "dana-key")
	b.click(`form[aria-label="Create a key"] button[type=submit]`)
	b.waitJS("secret shown", `!!document.querySelector('input[data-secret]')?.value`)
	secret := evalJS[string](b, `document.querySelector('input[data-secret]').value`)
	b.click(`.secret .actions button`)
	b.waitJS("own key listed", `document.querySelector('#main tbody')?.textContent.includes('dana-key')`)
	if n := evalJS[int](b, `document.querySelectorAll('#main tbody tr').length`); n != 1 {
		b.t.Errorf("a plain user's key list has %d rows, want her one key", n)
	}
	b.shot("user-keys")
	useKey(b.t, b.base, secret, http.StatusOK)
	// Never having used a model, she gets one whose channel answers.
	b.page("playground", "Playground")
	b.waitJS("preselected", `document.querySelector('select[name=model]')?.options.length >= 2`)
	if m := evalJS[string](b, `document.querySelector('select[name=model]').value`); m != "demo" {
		b.t.Errorf("a new user's playground preselects %q, want demo", m)
	}

	b.page("usage", "Usage")
	b.waitJS("request log", `!!document.querySelector('section[aria-labelledby=raw-log]')`)
	if evalJS[bool](b, `document.querySelector('#main').textContent.includes('browser-key')`) {
		b.t.Error("a plain user sees the admin's usage")
	}
	b.shot("user-usage")
	logOut(b)
	logInAs(b, "admin", browserAdminPassword)
	b.waitJS("home after login", `document.querySelector('#main h1')?.textContent === 'Home'`)
	return secret
}

// disableUser disables the plain user in the Users page and checks that
// her key is refused within a second.
func disableUser(b *tab, base, secret string) {
	b.page("users", "Users")
	b.click(`button[aria-label="Edit user ` + plainUserName + `"]`)
	b.click(`form[aria-label="Edit user ` + plainUserName + `"] input[name=disabled]`)
	b.click(`form[aria-label="Edit user ` + plainUserName + `"] button[type=submit]`)
	b.waitJS("user disabled", `document.querySelector('#main tbody')?.textContent.includes('disabled')`)
	b.shot("users-disabled")
	waitRefused(b, base, secret, "the disabled user's key")
}

// copyBaseURL clicks the copy button of the OpenAI base URL and reads the
// system clipboard back.
func copyBaseURL(b *tab) {
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(b.ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: b.base,
		})
		if err != nil {
			b.t.Fatalf("grant %s: %v", name, err)
		}
	}
	b.click(`button[aria-label="Copy the OpenAI base URL"]`)
	b.waitJS("copied", `document.querySelector('button[aria-label="Copy the OpenAI base URL"]').textContent === 'Copied'`)
	got := evalJS[string](b, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)
	if got != b.base+"/v1" {
		b.t.Errorf("clipboard holds %q, want %q", got, b.base+"/v1")
	}
}

// createKey creates a key and returns the secret the page shows once.
func createKey(b *tab) string {
	b.page("keys", "Keys")
	b.typeInto(`form[aria-label="Create a key"] input[name=name]`, "browser-key")
	b.click(`form[aria-label="Create a key"] button[type=submit]`)
	b.waitJS("secret shown", `!!document.querySelector('input[data-secret]')?.value`)
	secret := evalJS[string](b, `document.querySelector('input[data-secret]').value`)
	if !regexp.MustCompile(`^sk-rst-[0-9A-Za-z]{40}$`).MatchString(secret) {
		b.t.Fatalf("secret %q", secret)
	}
	b.waitJS("key listed", `document.querySelector('#main table')?.textContent.includes('browser-key')`)
	if v := evalJS[string](b, `document.querySelector('form[aria-label="Create a key"] input[name=models]').value`); v != "*" {
		b.t.Errorf("the form, reset after create, has models %q, want the default *", v)
	}
	b.shot("keys-created")
	b.click(`.secret .actions button`)
	if evalJS[bool](b, `document.body.textContent.includes(`+strconv.Quote(secret)+`) || !!document.querySelector('input[data-secret]')`) {
		b.t.Error("the secret is still on the page after Done")
	}
	// An edit of one field saves it and leaves the others.
	b.click(`button[aria-label="Edit key browser-key"]`)
	b.do("set rpm", chromedp.SetValue(chromedp.CSS(`form[aria-label="Edit key browser-key"] input[name=rpm]`), "600"))
	b.click(`form[aria-label="Edit key browser-key"] button[type=submit]`)
	b.waitJS("edited", `document.querySelector('#main tbody')?.textContent.includes('600 rpm')`)
	if row := evalJS[string](b, `document.querySelector('#main tbody tr').textContent`); !strings.Contains(row, "browser-key") || !strings.Contains(row, "never") {
		b.t.Errorf("after editing rpm the key row reads %q", row)
	}
	return secret
}

// useKey calls the gateway with the key's secret, as a client would.
func useKey(t *testing.T, base, secret string, want int) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Errorf("GET /v1/models with the key: %d, want %d", resp.StatusCode, want)
	}
}

// recordReplies makes the page remember every text the last reply bubble
// showed, so the test can tell a streamed reply from one that appeared
// whole. The hook belongs to the test, not to the app.
const recordReplies = `(() => {
  window.seen = [];
  new MutationObserver(() => {
    const all = document.querySelectorAll('.msg.assistant .text');
    if (all.length) window.seen.push(all[all.length - 1].textContent);
  }).observe(document.querySelector('.chat'), { subtree: true, childList: true, characterData: true });
})()`

func playground(b *tab) {
	b.page("playground", "Playground")
	b.waitJS("model list", `document.querySelector('select[name=model]')?.value === 'demo'`)
	// The broken channel's model comes first, but is not the one picked.
	if first := evalJS[string](b, `document.querySelector('select[name=model]').options[0].value`); first != brokenModel {
		b.t.Errorf("the first model offered is %q, want %q", first, brokenModel)
	}
	b.do("record", chromedp.Evaluate[chromedp.Void](recordReplies))
	var inputs []int
	turns := []struct {
		style  string
		stream bool
	}{{"openai", true}, {"anthropic", true}, {"gemini", true}, {"openai", false}}
	for i, turn := range turns {
		if !turn.stream {
			b.click(`input[name=stream]`)
		}
		b.do("pick "+turn.style, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(s => { s.value = %q; s.dispatchEvent(new Event('input')); })(document.querySelector('select[name=style]'))`, turn.style)))
		said := fmt.Sprintf("turn %d in %s style", i+1, turn.style)
		b.typeInto(`textarea[name=message]`, said)
		b.click(`form[aria-label="Send a message"] button[type=submit]`)
		b.waitJS("reply to "+said, `document.querySelector('.stats')?.textContent.includes('output tokens') && !document.querySelector('[aria-busy]')`)
		final := evalJS[string](b, `[...document.querySelectorAll('.msg.assistant .text')].pop().textContent`)
		if !strings.HasPrefix(final, "Hello from the Rosetta demo model.") || !strings.Contains(final, said) {
			b.t.Errorf("%s reply %q", turn.style, final)
		}
		checkStreamed(b, said, final, turn.stream)
		stats := evalJS[string](b, `document.querySelector('.stats').textContent`)
		m := regexp.MustCompile(`first token after \d+ ms · total \d+ ms · (\d+) input tokens`).FindStringSubmatch(stats)
		if m == nil {
			b.t.Fatalf("%s stats %q", said, stats)
		}
		n, _ := strconv.Atoi(m[1])
		inputs = append(inputs, n)
	}
	// Each turn resends the history, so the prompt grows.
	for i := 1; i < len(inputs); i++ {
		if inputs[i] <= inputs[i-1] {
			b.t.Errorf("input tokens per turn %v: the history is not resent", inputs)
		}
	}
	b.click(`input[name=show_curl]`)
	curls := evalJS[string](b, `[...document.querySelectorAll('.code pre')].map(p => p.textContent).join('\n')`)
	for _, want := range []string{"/v1/chat/completions", "/v1/messages", "/v1beta/models/demo:generateContent", "turn 4 in openai style"} {
		if !strings.Contains(curls, want) {
			b.t.Errorf("curl commands lack %q:\n%s", want, curls)
		}
	}
	b.shot("playground")
	brokenTurn(b)
	mediaTabs(b)
}

// checkStreamed asserts that parts of a streamed reply showed before the
// whole, and that a reply not streamed showed whole at once.
func checkStreamed(b *tab, turn, final string, streamed bool) {
	b.t.Helper()
	seen := evalJS[[]string](b, `window.seen.splice(0)`)
	partial := 0
	for _, s := range seen {
		if s != "" && len(s) < len(final) && strings.HasPrefix(final, s) {
			partial++
		}
	}
	if streamed && partial < 3 {
		b.t.Errorf("%s: %d partial texts before the final one (seen %q): the reply did not stream in", turn, partial, seen)
	}
	if !streamed && partial > 0 {
		b.t.Errorf("%s: not streamed, yet %d partial texts showed: %q", turn, partial, seen)
	}
}

func usagePage(b *tab) {
	b.page("usage", "Usage")
	// Usage rows reach the store in batches: filter again until they show.
	b.do("usage rows", chromedp.Poll[chromedp.Void](`(() => {
  const rows = [...document.querySelectorAll('section[aria-labelledby=raw-log] tbody tr')];
  if (rows.filter(r => r.textContent.includes('browser-key')).length >= 4 && rows.some(r => r.textContent.includes('`+brokenModel+`'))) return true;
  document.querySelector('form[aria-label="Request log filters"] button[type=submit]').click();
  return false;
})()`, chromedp.WithPollingInterval(300*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
	log := evalJS[string](b, `document.querySelector('section[aria-labelledby=raw-log] tbody').textContent`)
	for _, style := range []string{"openai", "anthropic", "gemini"} {
		if !strings.Contains(log, style) {
			b.t.Errorf("the request log has no %s request: %s", style, log)
		}
	}
	// Draw the charts again, now that the rows are in.
	b.do("redraw", chromedp.Evaluate[chromedp.Void](`document.querySelector('form[aria-label="Chart filters"]').dispatchEvent(new Event('change'))`))
	b.waitJS("charts", `document.querySelector('figure.chart svg')?.getAttribute('aria-label').startsWith('Requests: 1 line')`)
	if n := evalJS[int](b, `document.querySelectorAll('figure.chart svg path').length`); n < 4 {
		b.t.Errorf("%d chart lines, want one in each of 4 charts", n)
	}
	b.shot("usage")
	failedRowDetail(b)
	chartChecks(b)
	endpointBreakdown(b)
}

func channelsPage(b *tab) {
	b.page("channels", "Channels")
	// The type select offers the registry's types, as the API lists them.
	b.waitJS("type select", `!!document.querySelector('form[aria-label="Add a channel"] select[name=type]')`)
	types := evalJS[[]string](b, `[...document.querySelectorAll('form[aria-label="Add a channel"] select[name=type] option')].map(o => o.value)`)
	if want := proxy.ChannelTypes(); !slices.Equal(types, want) {
		b.t.Errorf("channel type select offers %q, want the registry's %q", types, want)
	}
	brokenChannelTest(b)
	b.shot("channels")
}

// revoke revokes the key in the page and checks the gateway rejects it
// within a second.
func revoke(b *tab, base, secret string) {
	b.page("keys", "Keys")
	b.click(`button[aria-label="Revoke key browser-key"]`)
	b.click(`button[aria-label="Confirm revoke: Revoke key browser-key"]`)
	b.waitJS("revoked", `document.querySelector('#main tbody')?.textContent.includes('revoked')`)
	b.shot("keys-revoked")
	waitRefused(b, base, secret, "the revoked key")
}

// waitRefused checks that the gateway answers the key with 401 within a
// second.
func waitRefused(b *tab, base, secret, what string) {
	b.t.Helper()
	revoked := time.Now()
	for {
		req, _ := http.NewRequest("GET", base+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return
		}
		if time.Since(revoked) > time.Second {
			b.t.Fatalf("%s still gets %d after a second", what, resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// phone looks at the pages on a phone-sized screen, where the navigation
// folds into a menu.
func phone(b *tab) {
	b.do("phone screen", chromedp.EmulateViewport(390, 844))
	openMenu := func() {
		b.click(`#menu-toggle`)
		b.waitJS("menu open", `getComputedStyle(document.querySelector('#nav')).display !== 'none'`)
	}
	openMenu()
	b.shot("phone-menu")
	b.page("home", "Home")
	fitsPhone(b, "home")
	snippetsUncovered(b, "home")
	b.shot("phone-home")
	openMenu()
	b.page("playground", "Playground")
	b.click(`input[name=show_curl]`)
	fitsPhone(b, "playground")
	snippetsUncovered(b, "playground")
	b.shot("phone-playground")
	for _, p := range [][2]string{{"keys", "Keys"}, {"usage", "Usage"}, {"channels", "Channels"}} {
		openMenu()
		b.page(p[0], p[1])
		b.waitJS(p[0]+" table", `!!document.querySelector('#main tbody tr')`)
		fitsPhone(b, p[0])
		b.shot("phone-" + p[0])
	}
	// The last page was Usage's charts' neighbour: check the charts' text
	// size on their page.
	openMenu()
	b.page("usage", "Usage")
	b.waitJS("charts", `!!document.querySelector('figure.chart svg text')`)
	b.waitJS("breakdown", `document.querySelectorAll('section[aria-labelledby=by-endpoint] tbody tr').length >= 4`)
	fitsPhone(b, "usage with its breakdown by endpoint")
	b.shot("phone-usage-by-endpoint")
	if h := evalJS[float64](b, `Math.min(...[...document.querySelectorAll('figure.chart svg text')].map(t => t.getBoundingClientRect().height))`); h < 11 {
		b.t.Errorf("chart labels are %.1f px high on a phone, want 11 or more", h)
	}
	b.do("desktop screen", chromedp.EmulateViewport(1280, 900))
}

// keepScreenshots copies the screenshots to /tmp/rosetta-screenshots when
// run outside CI, for a person to look at.
func keepScreenshots(t *testing.T, dir string) {
	if os.Getenv("CI") == "true" {
		return
	}
	const keep = "/tmp/rosetta-screenshots"
	os.RemoveAll(keep)
	os.MkdirAll(keep, 0o755)
	files, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			os.WriteFile(filepath.Join(keep, filepath.Base(f)), data, 0o644)
		}
	}
}
