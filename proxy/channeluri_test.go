package proxy

import (
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"
)

// A channel's upstream URLs are parsed once and kept, up to
// maxParsedURIs, but for those that name one response: each request still
// goes to its own URL, path and query as given.
func TestChannelKeepsParsedURIs(t *testing.T) {
	ch := &channel{}
	f := func(uri string, keep bool) {
		t.Helper()
		for range 2 { // parsed, then from the kept ones
			req := fasthttp.AcquireRequest()
			ch.setURI(req, []byte(uri), keep)
			if got := req.URI().String(); got != uri {
				t.Errorf("setURI(%q) made %q", uri, got)
			}
			fasthttp.ReleaseRequest(req)
		}
	}
	f("http://127.0.0.1:9/v1/chat/completions", true)
	f("http://127.0.0.1:9/v1/embeddings", true)
	f("http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", true)
	f("http://127.0.0.1:9/v1/responses/resp_1", false)
	if m := *ch.uris.Load(); len(m) != 3 || m["http://127.0.0.1:9/v1/responses/resp_1"] != nil {
		t.Errorf("kept %d URLs, want the 3 shared ones", len(m))
	}
	for i := range maxParsedURIs + 10 {
		f(fmt.Sprintf("http://127.0.0.1:9/v1beta/models/m%d:generateContent", i), true)
	}
	if n := len(*ch.uris.Load()); n != maxParsedURIs {
		t.Errorf("kept %d URLs, want at most %d", n, maxParsedURIs)
	}
}
