package proxy_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// panickyKeys is a key source whose every lookup panics.
type panickyKeys struct{}

func (panickyKeys) KeyByHash([sha256.Size]byte) (*proxy.Key, error) { panic("boom") }

// TestRecoverPanic: a handler that panics, found by its path (the POST
// routes without parameters) or by the router, is answered through the
// real handler as the router's PanicHandler answers: a 500 in the client's
// style naming the request id.
func TestRecoverPanic(t *testing.T) {
	tg := startGatewayWith(t, channel("oa", "http://127.0.0.1:1", ""), proxy.Options{Keys: panickyKeys{}})
	const unknown = "sk-nobody-0123456789abcdef" // not a static key: asks the panicky source
	body := `{"model":"gpt-4o-mini","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		path, header, style string
	}{
		{"/v1/chat/completions", "Authorization", `"type":"server_error"`},
		{"/v1/responses", "Authorization", `"type":"server_error"`},
		{"/v1/messages", "x-api-key", `"type":"error"`},
		{"/v1beta/models/gpt-4o-mini:generateContent", "x-goog-api-key", `"status":"INTERNAL"`},
	} {
		key := unknown
		if c.header == "Authorization" {
			key = "Bearer " + unknown
		}
		resp, got := tg.send(t, "POST", c.path, map[string]string{c.header: key, "anthropic-version": "2023-06-01"}, body)
		if resp.StatusCode != 500 || !strings.Contains(string(got), "Internal error (request id req_") ||
			!strings.Contains(string(got), c.style) {
			t.Errorf("%s: %d %s: want a 500 naming the request id, with %s", c.path, resp.StatusCode, got, c.style)
		}
	}
}
