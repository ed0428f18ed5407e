package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/genai"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// What the console's pages tell a user beyond the happy path (issue 15):
// base URLs as each SDK takes them, a channel's health and failed tests,
// the channels a request tried, the new playground tabs, charts with
// little or no data, and pages that fit a phone. TestConsoleInBrowser
// calls these in its walk, on its one browser and gateway.

// brokenChannel is a channel nothing listens for, whose model sorts
// before the demo's: a new user's first pick if the console preselected
// the first model.
const (
	brokenChannel = "a-broken"
	brokenModel   = "a-broken-model"
	refusedCause  = "connection refused to 127.0.0.1:1"
)

// setSelect picks a value in a select and tells the page, as a user's
// choice would.
func (b *tab) setSelect(sel, value string) {
	b.t.Helper()
	b.do("pick "+value+" in "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(s => { s.value = %q; s.dispatchEvent(new Event('input', {bubbles: true})); s.dispatchEvent(new Event('change', {bubbles: true})); })(document.querySelector(%q))`, value, sel)))
}

// homeBaseURLs checks Home's base URL rows, each the value its style's
// SDK takes as it is, with the option it goes in, and returns the Gemini
// one.
func homeBaseURLs(b *tab) string {
	b.t.Helper()
	want := map[string][2]string{
		"openai":    {b.base + "/v1", "base_url (Python), baseURL (JavaScript)"},
		"anthropic": {b.base, "base_url (Python), baseURL (JavaScript)"},
		"gemini":    {b.base, "http_options.base_url (Python), httpOptions.baseUrl (JavaScript), HTTPOptions.BaseURL (Go)"},
	}
	for style, w := range want {
		row := fmt.Sprintf(`document.querySelector('input[data-style=%s]')`, style)
		if got := evalJS[string](b, row+`.value`); got != w[0] {
			b.t.Errorf("%s base URL row %q, want %q", style, got, w[0])
		}
		if help := evalJS[string](b, `document.getElementById(`+row+`.getAttribute('aria-describedby')).textContent`); !strings.Contains(help, w[1]) {
			b.t.Errorf("%s base URL row says %q, want the option %q", style, help, w[1])
		}
	}
	return evalJS[string](b, `document.querySelector('input[data-style=gemini]').value`)
}

// homeSnippets checks that the snippets name a model that exists even for
// a caller without a key, that Responses is a style, and that intros stand
// apart from what follows them.
func homeSnippets(b *tab) {
	b.t.Helper()
	b.waitJS("snippets naming demo", `(() => {
  const pres = [...document.querySelectorAll('.code pre')];
  return pres.length >= 3 && pres.every(p => p.textContent.includes('"demo"') && !p.textContent.includes('MODEL_NAME'));
})()`)
	b.setSelect(`#main select`, "responses")
	text := evalJS[string](b, `[...document.querySelectorAll('.code pre')].map(p => p.textContent).join('\n')`)
	for _, want := range []string{"/v1/responses", "client.responses.create(model=\"demo\", input=\"Hello\")",
		"client.responses.create({ model: \"demo\", input: \"Hello\" })", "output_text"} {
		if !strings.Contains(text, want) {
			b.t.Errorf("the Responses snippets lack %q:\n%s", want, text)
		}
	}
	b.setSelect(`#main select`, "openai")
	introsStandApart(b, "home", 2)
}

// introsStandApart checks that the page's introductions (n of them) are
// not flush against the field or list that follows them.
func introsStandApart(b *tab, page string, n int) {
	b.t.Helper()
	gaps := evalJS[[]float64](b, `[...document.querySelectorAll('#main p.intro')].map(p =>
  p.nextElementSibling.getBoundingClientRect().top - p.getBoundingClientRect().bottom)`)
	if len(gaps) != n {
		b.t.Errorf("%s has %d introductions, want %d", page, len(gaps), n)
	}
	for _, g := range gaps {
		if g < 8 {
			b.t.Errorf("an introduction on %s is %.0f px from what follows it, want 8 or more", page, g)
		}
	}
}

// geminiSDK makes a request with Google's genai SDK, its base URL the one
// Home shows for the Gemini style, pasted as it is.
func geminiSDK(t *testing.T, baseURL, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Models.GenerateContent(ctx, "demo", genai.Text("Hello through genai"), nil)
	if err != nil {
		t.Fatalf("genai with the Gemini base URL %q: %v", baseURL, err)
	}
	if !strings.Contains(resp.Text(), "Hello from the Rosetta demo model") {
		t.Errorf("genai reply %q", resp.Text())
	}
}

// keysRefresh checks that the open Keys page shows a use of the key
// without being revisited.
func keysRefresh(b *tab, secret string) {
	b.t.Helper()
	waitStatus(b.t, b.base, secret, "/v1/chat/completions", `{"model":"demo","messages":[{"role":"user","content":"Hi"}]}`, http.StatusOK, 0)
	b.waitJS("the key's use shown", `(() => {
  const row = [...document.querySelectorAll('#main tbody tr')].find(r => r.textContent.includes('browser-key'));
  return row && row.querySelector('td[data-label=Spend]').textContent.startsWith('1 req') &&
    row.querySelector('td[data-label="Last used"]').textContent !== '—';
})()`)
}

// brokenChannelTest adds a channel that cannot be reached and tests it:
// the result goes under the row, with the cause in words, the row stays a
// row, and the channel no longer looks healthy.
func brokenChannelTest(b *tab) {
	b.t.Helper()
	introsStandApart(b, "channels", 1)
	add := `form[aria-label="Add a channel"] `
	b.typeInto(add+`input[name=name]`, brokenChannel)
	b.setSelect(add+`select[name=type]`, "openai")
	b.typeInto(add+`input[name=base_url]`, "http://127.0.0.1:1/v1")
	b.typeInto(add+`textarea[name=api_keys]`, "sk-upstream-never-sent")
	b.typeInto(add+`input[name=models]`, brokenModel)
	b.click(add + `button[type=submit]`)
	row := `document.querySelector('button[aria-label="Test channel ` + brokenChannel + `"]')?.closest('tr')`
	b.waitJS("channel added", `!!`+row)
	b.click(`button[aria-label="Test channel ` + brokenChannel + `"]`)
	b.waitJS("test result", `document.querySelector('p.test-result[data-channel="`+brokenChannel+`"]')?.textContent.includes('`+refusedCause+`')`)
	if h := evalJS[float64](b, row+`.getBoundingClientRect().height`); h > 60 {
		b.t.Errorf("the failed test's row is %.0f px high, want a row's height", h)
	}
	if s := evalJS[string](b, row+`.querySelector('td[data-label=State]').textContent`); s != "unhealthy" {
		b.t.Errorf("a channel that failed its only request is %q, want unhealthy", s)
	}
	if n := evalJS[string](b, row+`.querySelector('td[data-label=Requests]').textContent`); n != "1" {
		b.t.Errorf("after a test the channel counts %s requests, want 1", n)
	}
	if e := evalJS[string](b, `document.querySelector('p.last-error[data-channel="`+brokenChannel+`"]')?.textContent || ''`); !strings.Contains(e, refusedCause) {
		b.t.Errorf("last error %q", e)
	}
	b.click(`button[aria-label="Test channel demo"]`)
	b.waitJS("demo test result", `document.querySelector('p.test-result[data-channel="demo"]')?.textContent.includes('answered in')`)
}

// openCircuit tests the broken channel until its breaker opens (five
// failures in a row by default): the badge says until when.
func openCircuit(b *tab) {
	b.t.Helper()
	b.page("channels", "Channels")
	row := `document.querySelector('button[aria-label="Test channel ` + brokenChannel + `"]')?.closest('tr')`
	state := func() string { return evalJS[string](b, row+`.querySelector('td[data-label=State]').textContent`) }
	for i := 0; i < 5 && !strings.HasPrefix(state(), "open"); i++ {
		n := evalJS[string](b, row+`.querySelector('td[data-label=Requests]').textContent`)
		b.click(`button[aria-label="Test channel ` + brokenChannel + `"]`)
		b.waitJS("test counted", row+`?.querySelector('td[data-label=Requests]').textContent !== '`+n+`'`)
	}
	if s := state(); !regexp.MustCompile(`^open until \d{1,2}:\d\d:\d\d`).MatchString(s) || evalJS[float64](b, row+`.getBoundingClientRect().height`) > 80 {
		b.t.Errorf("after failed tests the broken channel is %q, want open until a time", s)
	}
	b.shot("channels-open")
}

var requestID = regexp.MustCompile(`req_[0-9a-f]{24}`)

// brokenTurn sends a chat to the broken channel's model: the error names
// the channel, the cause and the request id.
func brokenTurn(b *tab) {
	b.t.Helper()
	if s := evalJS[string](b, `document.querySelector('.stats').textContent`); !strings.Contains(s, "demo: answered (200)") || !requestID.MatchString(s) {
		b.t.Errorf("the last reply's trail: %q", s)
	}
	b.setSelect(`select[name=model]`, brokenModel)
	b.typeInto(`textarea[name=message]`, "anyone there?")
	b.click(`form[aria-label="Send a message"] button[type=submit]`)
	b.waitJS("error shown", `!!document.querySelector('.msg.error') && !document.querySelector('[aria-busy]')`)
	msg := evalJS[string](b, `document.querySelector('.msg.error').textContent`)
	for _, want := range []string{brokenChannel + ": 502, " + refusedCause, "Request req_"} {
		if !strings.Contains(msg, want) {
			b.t.Errorf("the error %q does not say %q", msg, want)
		}
	}
	b.shot("playground-error")
	b.setSelect(`select[name=model]`, "demo")
}

// mediaTabs tries the embeddings, images and speech tabs on the demo.
func mediaTabs(b *tab) {
	b.t.Helper()
	for _, tc := range []struct{ tab, done string }{
		{"embeddings", `/^Vector of [1-9]\d* dimensions/.test(p.querySelector('.vector-length')?.textContent) && /^\[-?\d\.\d{4}, /.test(p.querySelector('.vector-head').textContent)`},
		{"images", `p.querySelector('img.generated')?.complete && p.querySelector('img.generated').naturalWidth === 8`},
		{"speech", `p.querySelector('audio')?.src.startsWith('blob:') && p.querySelector('audio').readyState >= 1 && p.querySelector('audio').duration > 0.2`},
	} {
		panel := `section[data-tab=` + tc.tab + `]`
		b.click(`button[role=tab][data-tab=` + tc.tab + `]`)
		if m := evalJS[string](b, `document.querySelector('`+panel+` select[name=model]').value`); m != "demo" {
			b.t.Errorf("%s tab preselects %q, want demo", tc.tab, m)
		}
		b.click(panel + ` button[type=submit]`)
		b.waitJS(tc.tab+" result", `(p => `+tc.done+` && p.querySelector('.trail')?.textContent.includes('demo: answered (200)'))(document.querySelector('`+panel+`'))`)
		b.shot("playground-" + tc.tab)
	}
	b.click(`button[role=tab][data-tab=chat]`)
}

// failedRowDetail opens the request log's detail of the request to the
// broken channel: its attempt, the cause, how long it took, the request
// id, all kept with the usage row in the store.
func failedRowDetail(b *tab) {
	b.t.Helper()
	row := `[...document.querySelectorAll('section[aria-labelledby=raw-log] tbody tr')].find(r => r.textContent.includes('` + brokenModel + `'))`
	b.do("open the detail", chromedp.Evaluate[chromedp.Void](row+`.querySelector('button[aria-expanded]').click()`))
	detail := evalJS[string](b, row+`.nextElementSibling.hidden ? '' : `+row+`.nextElementSibling.textContent`)
	for _, want := range []string{brokenChannel + " failed with 502: " + refusedCause + " (after ", " ms)", "Request id req_"} {
		if !strings.Contains(detail, want) {
			b.t.Errorf("the failed request's detail %q does not say %q", detail, want)
		}
	}
}

// chartChecks: counts have whole-number ticks, the first point stands
// clear of the y labels, and a range with no request says so.
func chartChecks(b *tab) {
	b.t.Helper()
	labels := evalJS[[]string](b, `[...document.querySelector('figure.chart svg').querySelectorAll('text')].filter(t => t.getAttribute('x') === '54').map(t => t.textContent)`)
	seen := map[string]bool{}
	for _, l := range labels {
		if _, err := strconv.Atoi(strings.ReplaceAll(l, ",", "")); err != nil || seen[l] {
			b.t.Errorf("the Requests chart's y labels %q: want distinct whole numbers", labels)
			break
		}
		seen[l] = true
	}
	if gap := evalJS[float64](b, `(svg => Math.min(...[...svg.querySelectorAll('circle')].map(c => +c.getAttribute('cx'))) -
  Math.max(...[...svg.querySelectorAll('text')].filter(t => t.getAttribute('x') === '54').map(t => t.getBBox().x + t.getBBox().width)))(document.querySelector('figure.chart svg'))`); gap < 8 {
		b.t.Errorf("the first point is %.1f units from the y labels, want 8 or more", gap)
	}
	filterModel := func(model string) {
		b.do("chart filter model "+model, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(f => {
  f.elements.namedItem('model').value = %q;
  f.dispatchEvent(new Event('change'));
})(document.querySelector('form[aria-label="Chart filters"]'))`, model)))
	}
	filterModel("no-such-model")
	b.waitJS("empty state", `document.querySelector('.charts .empty-state')?.textContent.startsWith('No requests in this range yet') && !document.querySelector('figure.chart')`)
	b.shot("usage-empty")
	filterModel("")
	b.waitJS("charts back", `!!document.querySelector('figure.chart')`)
}

// covered lists the points of the code blocks' visible text that another
// element covers, found with elementFromPoint on each line's ends and
// middle, each block scrolled into view first; its first item is the
// number of points looked at.
const covered = `(() => {
  const bad = [];
  let points = 0;
  for (const pre of document.querySelectorAll('.code pre')) {
    if (pre.offsetParent === null) continue;
    pre.scrollIntoView({ block: 'center' });
    const box = pre.getBoundingClientRect();
    const range = document.createRange();
    range.selectNodeContents(pre);
    for (const r of range.getClientRects()) {
      const left = Math.max(r.left, box.left), right = Math.min(r.right, box.right);
      const top = Math.max(r.top, box.top), bottom = Math.min(r.bottom, box.bottom);
      if (right - left < 4 || bottom - top < 4) continue;
      const y = (top + bottom) / 2;
      for (const x of [left + 2, (left + right) / 2, right - 2]) {
        const el = document.elementFromPoint(x, y);
        points++;
        if (el && !pre.contains(el)) bad.push(el.outerHTML.slice(0, 60) + ' over ' + JSON.stringify(pre.textContent.slice(0, 20)));
      }
    }
  }
  return [String(points), ...bad];
})()`

// fitsPhone checks that the page does not scroll sideways.
func fitsPhone(b *tab, page string) {
	b.t.Helper()
	if w := evalJS[[]int](b, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
		b.t.Errorf("%s at %d px is %d px wide: it scrolls sideways", page, w[1], w[0])
	}
}

// snippetsUncovered checks that no element covers a code block's text.
func snippetsUncovered(b *tab, page string) {
	b.t.Helper()
	bad := evalJS[[]string](b, covered)
	if n, _ := strconv.Atoi(bad[0]); n < 20 {
		b.t.Errorf("%s at 390 px: only %d points of snippet text to look at", page, n)
	}
	if len(bad) > 1 {
		b.t.Errorf("%s at 390 px: elements over a snippet's text: %q", page, bad[1:])
	}
}

// latencyCell is a latency as the page writes it (fmtMs).
var latencyCell = regexp.MustCompile(`^[0-9][0-9.,]* m?s$`)

// endpointRows are the breakdown's rows as {endpoint: [requests, errors,
// other units]}.
const endpointRows = `Object.fromEntries([...document.querySelectorAll('section[aria-labelledby=by-endpoint] tbody tr')].map(r =>
  [r.querySelector('td[data-label=Endpoint]').textContent,
   ['Requests', 'Errors', '"Other units"'].map(c => r.querySelector('td[data-label=' + c + ']').textContent)]))`

// logEndpoints lists the Endpoint cell of each request in the log.
const logEndpoints = `[...document.querySelectorAll('section[aria-labelledby=raw-log] td[data-label=Endpoint] .endpoint')].map(e => e.textContent)`

// endpointBreakdown checks the usage page's breakdown by endpoint against
// what the walk sent, and that the log narrows to one endpoint, by its
// filter and from the breakdown.
func endpointBreakdown(b *tab) {
	b.t.Helper()
	// chat: keysRefresh's and genai's requests, four playground turns and
	// the failed one to the broken channel; one each from the media tabs,
	// the speech of the tab's 34-character text.
	want := map[string][3]string{
		"chat":               {"7", "1", "—"},
		"embeddings":         {"1", "0", "—"},
		"images.generations": {"1", "0", "1 image"},
		"audio.speech":       {"1", "0", "34 characters"},
	}
	var got map[string][3]string
	for deadline := time.Now().Add(5 * time.Second); ; {
		got = evalJS[map[string][3]string](b, endpointRows)
		if maps.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		// Rows reach the store in batches: draw again until all are in.
		b.do("redraw", chromedp.Evaluate[chromedp.Void](`document.querySelector('form[aria-label="Chart filters"]').dispatchEvent(new Event('change'))`))
		time.Sleep(200 * time.Millisecond)
	}
	if !maps.Equal(got, want) {
		b.t.Errorf("the breakdown by endpoint: %v, want %v", got, want)
	}
	b.shot("usage-by-endpoint")
	// Each endpoint's median and p95 latency, ranked from its requests.
	lat := evalJS[[][]string](b, `[...document.querySelectorAll('section[aria-labelledby=by-endpoint] tbody tr')].map(r =>
		['Median', 'p95'].map(c => r.querySelector('td[data-label=' + c + ']').textContent))`)
	for _, cells := range lat {
		for _, c := range cells {
			if !latencyCell.MatchString(c) {
				b.t.Errorf("the breakdown's latency cells %q: want durations", lat)
			}
		}
	}
	if w := evalJS[[]int](b, `(s => [s.scrollWidth, s.clientWidth])(document.querySelector('section[aria-labelledby=raw-log] .scroll'))`); w[0] > w[1] {
		b.t.Errorf("the request log is %d px wide in a box of %d: it scrolls sideways at 1280 px", w[0], w[1])
	}

	// One line per endpoint: the legend names the four.
	b.setSelect(`form[aria-label="Chart filters"] select[name=by]`, "endpoint")
	b.waitJS("a line per endpoint", `document.querySelector('figure.chart svg')?.getAttribute('aria-label').startsWith('Requests: 4 lines,')`)
	if l := evalJS[string](b, `document.querySelector('figure.chart .legend').textContent`); l != "chataudio.speechembeddingsimages.generations" {
		b.t.Errorf("the Requests chart's legend by endpoint: %q", l)
	}
	b.setSelect(`form[aria-label="Chart filters"] select[name=by]`, "key")

	// The log's endpoint filter offers what the gateway records, from the
	// gateway: the page has no list of its own.
	offered := evalJS[[]string](b, `[...document.querySelectorAll('form[aria-label="Request log filters"] select[name=endpoint] option')].map(o => o.value).filter(v => v)`)
	if !slices.Equal(offered, proxy.UsageEndpoints()) {
		b.t.Errorf("the log's endpoint filter offers %q, the gateway records %q", offered, proxy.UsageEndpoints())
	}
	b.setSelect(`form[aria-label="Request log filters"] select[name=endpoint]`, "embeddings")
	b.click(`form[aria-label="Request log filters"] button[type=submit]`)
	b.waitJS("log of embeddings", `JSON.stringify(`+logEndpoints+`) === '["embeddings"]'`)
	b.click(`section[aria-labelledby=raw-log] button[aria-expanded]`)
	if d := evalJS[string](b, `document.querySelector('section[aria-labelledby=raw-log] tr.detail:not([hidden]) p.endpoint')?.textContent || ''`); d != "Endpoint embeddings, called in the openai style." {
		b.t.Errorf("the embeddings request's detail says %q", d)
	}
	b.click(`button[aria-label="Show the requests to images.generations in the log"]`)
	b.waitJS("log of images", `JSON.stringify(`+logEndpoints+`) === '["images.generations"]'`)
	if v := evalJS[string](b, `document.querySelector('form[aria-label="Request log filters"] select[name=endpoint]').value`); v != "images.generations" {
		b.t.Errorf("after Show the log's endpoint filter is %q", v)
	}
	b.setSelect(`form[aria-label="Request log filters"] select[name=endpoint]`, "")
	b.click(`form[aria-label="Request log filters"] button[type=submit]`)
	b.waitJS("whole log", `new Set(`+logEndpoints+`).size >= 4`)
}
