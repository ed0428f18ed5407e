package responses

import (
	"math/bits"
	"sync"
)

// maxKeptText bounds the text buffer an encoder keeps as its own: the
// proxy pools encoders, and one long answer should not hold its size for
// good. A longer text spills into a pooled buffer (StreamEncoder.growText).
const maxKeptText = 64 << 10

// spillPools hold the buffers of texts past maxKeptText, by size class:
// class c's are maxKeptText<<(c+1) bytes (128 KiB up to 64 MiB). A text
// past the largest class gets a buffer of its own, not pooled.
var spillPools [10]sync.Pool

// spillClass is the class of the smallest buffer that holds n bytes,
// n > maxKeptText; len(spillPools) or more: none does.
func spillClass(n int) int {
	return max(bits.Len(uint(n-1)/maxKeptText)-1, 0)
}

// getSpill returns an empty buffer of at least n bytes, n > maxKeptText,
// to replace one of capacity had: past the largest class, twice had, so
// that a text growing past 64 MiB is still copied only a few times.
func getSpill(n, had int) *[]byte {
	c := spillClass(n)
	if c >= len(spillPools) {
		b := make([]byte, 0, max(n, 2*had))
		return &b
	}
	if b, ok := spillPools[c].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, maxKeptText<<(c+1))
	return &b
}

// putSpill gives b back to its class's pool, emptied; one of no class is
// left to the garbage collector.
func putSpill(b *[]byte) {
	*b = (*b)[:0]
	if c := spillClass(cap(*b)); c < len(spillPools) && cap(*b) == maxKeptText<<(c+1) {
		spillPools[c].Put(b)
	}
}
