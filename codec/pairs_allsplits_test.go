//go:build !race

package codec_test

import (
	"bytes"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
)

// TestPairsStreamAllSplits splits each pair's upstream streams into two
// reads at every byte, not only next to line endings (TestPairsStreamSplits):
// the client's stream must be the golden one wherever the read boundary
// falls. It transcodes each stream once per byte, 20 times slower under the
// race detector, so make test runs it in its pass without (make allocs).
func TestPairsStreamAllSplits(t *testing.T) {
	for _, p := range pairs() {
		for _, in := range inputs(t, p.to, "stream") {
			b := goldentest.Read(t, in.path)
			want := goldentest.Read(t, filepath.Join(p.dir, in.name+".sse"))
			tc := newTranscoder(p, nil)
			for i := 1; i < len(b); i++ {
				if got := tc.Run(t, b[:i], b[i:]); !bytes.Equal(got, want) {
					t.Fatalf("%s/%s split at byte %s:\n%s", filepath.Base(p.dir), in.name, strconv.Itoa(i), goldentest.DiffLines(want, got))
				}
			}
		}
	}
}
