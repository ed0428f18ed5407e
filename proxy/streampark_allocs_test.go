//go:build !race

package proxy

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestParkedHeaderAllocsNothing: a header built, parked and filled again,
// as a stream's are, is built the next time in the storage it parked: no
// allocation, as when a header kept its storage.
func TestParkedHeaderAllocsNothing(t *testing.T) {
	s := newHeaderSpares()
	var h fasthttp.ResponseHeader
	testutil.Allocs(t, "a header built, parked and filled", 0, func() {
		s.fill(&h)
		h.SetCanonical(strRequestID, []byte("req_0123456789abcdef01234567"))
		h.SetContentTypeBytes(strEventStream)
		h.SetCanonical(strCacheControl, strNoCache)
		h.SetCanonical(strAccelBuffering, strNo)
		h.SetCanonical(strUpstreamRequestID, []byte("req_3f9a2c1e8b7d4a6f9e0c2b1a8d7f6e5c"))
		s.park(&h)
	})
}
