package proxy

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestHeadPath: the path the head's limit is chosen by is the one the
// handler routes by (PathOriginal), however the target is spelled.
func TestHeadPath(t *testing.T) {
	f := func(host, target string) {
		t.Helper()
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.Header.SetRequestURI(target)
		if host != "" {
			req.Header.SetHost(host)
		}
		want := string(req.URI().PathOriginal())
		if got := string(headPath(&req.Header)); got != want {
			t.Errorf("headPath(%q, host %q) = %q, the handler's %q", target, host, got, want)
		}
	}
	for _, host := range []string{"gw", ""} {
		f(host, "/v1/audio/transcriptions")
		f(host, "/v1/audio/transcriptions?x=1")
		f(host, "/v1/audio/transcriptions#part")
		f(host, "/v1/audio/transcriptions#part?x=1")
		f(host, "/v1/audio/transcriptions?x=1#part")
		f(host, "http://gw/v1/images/edits")
		f(host, "https://other:8080/v1/images/edits?x=1#y")
		f(host, "http://gw?x=/v1/images/edits")
		f(host, "//gw/v1/images/edits")
		f(host, "/")
		f(host, "/v1//images/edits")
	}
}
