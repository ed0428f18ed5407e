//go:build !race

package proxy

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/responses"
)

// TestResponsesDroppedAllocsNothing: naming what a translated Responses
// request leaves out (X-Rosetta-Dropped) costs no allocation over
// decoding and translating it without the names: none for a request
// that leaves out nothing, and none once the exchange's list has grown
// for one that does. (Decoding itself allocates a few times: sonic's
// decoder, unquoted strings, a number.)
func TestResponsesDroppedAllocsNothing(t *testing.T) {
	for _, s := range []string{translatedPlain, translatedDropping} {
		x, c, ctx := translatedExchange()
		body := []byte(s)
		unnamed := func() {
			x.canonReady = false
			if e := responses.DecodeRequest(body, x.canonical()); e != nil {
				t.Fatal(e)
			}
			_, _ = (*Gateway)(nil).upstreamBody(ctx, &bodyBuf{&x.buf}, x, body, c)
		}
		named := func() { translateResponses(t, x, c, ctx, body) }
		named()
		if without, with := testing.AllocsPerRun(200, unnamed), testing.AllocsPerRun(200, named); with > without {
			t.Errorf("%s: %v allocations with the names, %v without", s, with, without)
		}
		if got := string(ctx.Response.Header.Peek("X-Rosetta-Dropped")); (got == "") != (s == translatedPlain) {
			t.Errorf("%s: X-Rosetta-Dropped %q", s, got)
		}
	}
}
