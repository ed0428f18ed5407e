package rawjson

// Equal reports whether a and b hold the same bytes: for 32 bytes or
// more, with vectorEqual, 32 bytes a look without the byte loops
// runtime.memequal ends with (its last block is compared overlapping the
// one before); else as string(a) == string(b).
func Equal(a, b []byte) bool {
	if len(a) != len(b) {
		return false // equalAVX2 takes both lengths from a
	}
	if vectorEqual && len(a) >= 32 {
		return equalVector(a, b)
	}
	return string(a) == string(b)
}
