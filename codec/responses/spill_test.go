package responses

import "testing"

// Past the largest pooled class a spill still doubles: a text growing a
// little at a time is not copied whole at every delta.
func TestSpillPastLargestClassDoubles(t *testing.T) {
	largest := maxKeptText << len(spillPools)
	b := getSpill(largest+1, largest)
	if cap(*b) < 2*largest {
		t.Fatalf("spill of %d bytes past a %d-byte one: capacity %d, want at least %d", largest+1, largest, cap(*b), 2*largest)
	}
	if b = getSpill(largest+1, 0); cap(*b) < largest+1 {
		t.Fatalf("capacity %d < %d", cap(*b), largest+1)
	}
}
