package main

import (
	"net/http"
	"strings"

	"github.com/chromedp/chromedp"
)

// keyLimitsInBrowser creates a key with a limit on the demo model through
// the Keys form, sees it listed and refusing the model's second request,
// edits it (a bad number is shown at its row, a second model added, then
// removed), looks at the form on a phone, and gives the broken channel
// limits through the Channels form.
func keyLimitsInBrowser(b *tab) {
	b.t.Helper()
	b.page("keys", "Keys")
	create := `form[aria-label="Create a key"] `
	b.typeInto(create+`input[name=name]`, "limits-key")
	b.click(create + `.model-limits > button`)
	b.typeInto(create+`.ml-row input[data-part=model]`, "demo")
	b.typeInto(create+`.ml-row input[data-part=rpm]`, "1")
	b.click(create + `button[type=submit]`)
	b.waitJS("secret shown", `!!document.querySelector('input[data-secret]')?.value`)
	secret := evalJS[string](b, `document.querySelector('input[data-secret]').value`)
	b.click(`.secret .actions button`)
	limitsCell := `[...document.querySelectorAll('#main tbody tr')].find(r => r.textContent.includes('limits-key'))?.querySelector('td[data-label=Limits]').textContent`
	// Its own limits are none, so the cell lists its model limit alone.
	b.waitJS("model limit listed", limitsCell+` === 'demo: 1 rpm'`)
	if n := evalJS[int](b, `document.querySelectorAll('form[aria-label="Create a key"] .ml-row').length`); n != 0 {
		b.t.Errorf("the create form keeps %d model limit rows after creating", n)
	}
	if status, body := sendForBody(b.t, b.base, secret, "demo"); status != http.StatusOK {
		b.t.Fatalf("the first demo request of the limited key: %d %s", status, body)
	}
	if status, body := sendForBody(b.t, b.base, secret, "demo"); status != http.StatusTooManyRequests || !strings.Contains(body, "for the model 'demo'") {
		b.t.Errorf("the second demo request of a key limited to 1 rpm on it: %d %s, want a 429 naming the model", status, body)
	}

	b.click(`button[aria-label="Edit key limits-key"]`)
	edit := `form[aria-label="Edit key limits-key"] `
	if got := evalJS[[]string](b, `[...document.querySelectorAll('`+edit+`.ml-row input')].map(i => i.value)`); strings.Join(got, ",") != "demo,1," {
		b.t.Errorf("the edit form's model limits read %q, want demo, 1 and no tpm", got)
	}
	b.do("set rpm", chromedp.SetValue(chromedp.CSS(edit+`.ml-row input[data-part=rpm]`), "-1"))
	b.click(edit + `button[type=submit]`)
	b.waitJS("the error at the limits", `document.querySelector('`+edit+`.model-limits .err')?.textContent.includes('"demo": rpm must be 0 or more')`)
	if !evalJS[bool](b, `document.querySelector('`+edit+`.ml-row input[data-part=rpm]').getAttribute('aria-invalid') === 'true'`) {
		b.t.Error("the refused rpm is not marked invalid")
	}
	b.do("set rpm", chromedp.SetValue(chromedp.CSS(edit+`.ml-row input[data-part=rpm]`), "5"))
	b.click(edit + `.model-limits > button`)
	b.typeInto(edit+`.ml-row:last-child input[data-part=model]`, "gpt-x")
	b.typeInto(edit+`.ml-row:last-child input[data-part=tpm]`, "900")
	b.do("set the key's tpm", chromedp.SetValue(chromedp.CSS(edit+`input[name=tpm]`), "500"))
	b.click(edit + `button[type=submit]`)
	b.waitJS("both listed under the key's own", limitsCell+` === '500 tpmdemo: 5 rpmgpt-x: 900 tpm'`) // a line each
	b.shot("keys-model-limits")

	b.do("phone screen", chromedp.EmulateViewport(390, 844))
	b.click(`button[aria-label="Edit key limits-key"]`)
	fitsPhone(b, "the keys page with a key's model limits being edited")
	narrow := evalJS[[]string](b, `[...document.querySelectorAll('`+edit+`.ml-row input, `+edit+`.ml-row button')]
  .filter(el => { const r = el.getBoundingClientRect(); return r.right > innerWidth || r.width < 60; }).map(el => el.outerHTML.slice(0, 60))`)
	if len(narrow) > 0 {
		b.t.Errorf("at 390 px, model limit controls past the edge or under 60 px wide: %q", narrow)
	}
	b.shot("phone-key-limits")
	b.click(`button[aria-label="Remove the limit on gpt-x"]`)
	b.click(edit + `button[type=submit]`)
	b.waitJS("removed", limitsCell+` === '500 tpmdemo: 5 rpm'`)
	b.do("desktop screen", chromedp.EmulateViewport(1280, 900))

	b.page("channels", "Channels")
	b.click(`button[aria-label="Edit channel ` + brokenChannel + `"]`)
	form := `form[aria-label="Edit channel ` + brokenChannel + `"] `
	b.do("set rpm", chromedp.SetValue(chromedp.CSS(form+`input[name=rpm]`), "30"))
	b.do("set tpm", chromedp.SetValue(chromedp.CSS(form+`input[name=tpm]`), "900"))
	b.click(form + `button[type=submit]`)
	channelLimits := func(name string) string {
		return `[...document.querySelectorAll('#main tbody tr')].find(r => r.querySelector('td')?.textContent === '` + name + `')?.querySelector('td[data-label="Priority / weight, limits"] .muted').textContent`
	}
	b.waitJS("channel limits listed", channelLimits(brokenChannel)+` === '30 rpm900 tpm'`) // a line each
	if got := evalJS[string](b, channelLimits("demo")); got != "no limits" {
		b.t.Errorf("the demo channel, without limits, lists %q", got)
	}
	if w := evalJS[[]int](b, `(s => [s.scrollWidth, s.clientWidth])(document.querySelector('#main .scroll'))`); w[0] > w[1] {
		b.t.Errorf("the channel list with its limits is %d px wide in %d px: it scrolls sideways", w[0], w[1])
	}
	b.shot("channels-limits")
}
