package proxy_test

import (
	"regexp"
	"testing"
)

// One prompt gets one input token count wherever the gateway must estimate
// it (the demo model counts as the gateway estimates): count_tokens, an
// Anthropic stream's message_start and its final usage, every Gemini
// chunk's promptTokenCount, and the OpenAI usage.
func TestOneTokenEstimate(t *testing.T) {
	tg := startGateway(t, "  - {name: demo, type: demo, models: [demo], pace: 1ms}\n")
	an := map[string]string{"x-api-key": openKey, "anthropic-version": "2023-06-01"}
	const system, user = "Be brief.", "Tell me about the sea, the waves and the tides."
	anBody := func(stream bool) string {
		s := `{"model":"demo","max_tokens":100,"system":"` + system + `","messages":[{"role":"user","content":"` + user + `"}]`
		if stream {
			s += `,"stream":true`
		}
		return s + "}"
	}
	asked := []struct {
		what, path string
		header     map[string]string
		body       string
		count      *regexp.Regexp
	}{
		{"count_tokens", "/v1/messages/count_tokens", an, anBody(false), regexp.MustCompile(`"input_tokens":(\d+)`)},
		{"an Anthropic stream", "/v1/messages", an, anBody(true), regexp.MustCompile(`"input_tokens":(\d+)`)},
		{"a Gemini stream", "/v1beta/models/demo:streamGenerateContent?alt=sse", map[string]string{"x-goog-api-key": openKey},
			`{"systemInstruction":{"parts":[{"text":"` + system + `"}]},"contents":[{"role":"user","parts":[{"text":"` + user + `"}]}]}`,
			regexp.MustCompile(`"promptTokenCount":(\d+)`)},
		{"an OpenAI answer", "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + openKey},
			`{"model":"demo","messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"` + user + `"}]}`,
			regexp.MustCompile(`"prompt_tokens":(\d+)`)},
	}
	want := ""
	for _, a := range asked {
		resp, body := tg.send(t, "POST", a.path, a.header, a.body)
		counts := a.count.FindAllSubmatch(body, -1)
		if resp.StatusCode != 200 || len(counts) == 0 {
			t.Fatalf("%s: %d, no count in %s", a.what, resp.StatusCode, body)
		}
		for _, c := range counts {
			if want == "" {
				want = string(c[1])
			}
			if string(c[1]) != want {
				t.Errorf("%s reports %s input tokens, count_tokens %s:\n%s", a.what, c[1], want, body)
				break
			}
		}
	}
}
