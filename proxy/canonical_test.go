package proxy

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestCanonicalHeaderNames holds every style's header names to the
// spelling fasthttp gives a header it reads: canonicalReader and
// canonicalWriter compare and write names as the codec spells them, so a
// name spelled otherwise would be missed silently. Each style reads and
// writes the same through them as through fasthttp's own normalizing Peek
// and SetBytesV.
func TestCanonicalHeaderNames(t *testing.T) {
	for name, d := range registry {
		var up fasthttp.ResponseHeader
		hdr := d.http
		names := append([]string{"Retry-After", "Retry-After-Ms", hdr.RequestIDHeader}, hdr.PassedHeaders...)
		if q := hdr.Quota; q != nil {
			for _, ns := range q.Names {
				names = append(names, ns[:]...)
			}
		}
		for i, n := range names {
			if n != "" {
				up.Set(strings.ToLower(n), strconv.Itoa(100+i)) // fasthttp normalizes what it is given
			}
		}
		for _, n := range names {
			if got, want := (canonicalReader{&up}).Peek(n), up.Peek(n); string(got) != string(want) {
				t.Errorf("%s: %q reads %q, fasthttp %q: not spelled as fasthttp normalizes it", name, n, got, want)
			}
		}
		viaCodec := d.ReadRateLimit(canonicalReader{&up}, nil)
		if want := d.ReadRateLimit(&up, nil); viaCodec != want {
			t.Errorf("%s: rate limits read %+v, fasthttp %+v", name, viaCodec, want)
		}
		viaCodec.RetryAfter = 3 * time.Second
		var a, b fasthttp.ResponseHeader
		d.SetRateLimit(canonicalWriter{&a}, nil, viaCodec)
		d.SetRateLimit(&b, nil, viaCodec)
		if a.String() != b.String() {
			t.Errorf("%s: written\n%s\nfasthttp wrote\n%s", name, a.String(), b.String())
		}
	}
}
