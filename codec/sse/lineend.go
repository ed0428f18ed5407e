package sse

import "bytes"

// lineEnd returns the offset of b's first "\n" or "\r" (the end of its
// first line), or -1: one look at each byte where two IndexByte calls
// made two.
func lineEnd(b []byte) int {
	if vectorLineEnd && len(b) >= 32 {
		return lineEndVector(b)
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	if i == len(b) {
		return -1
	}
	return i
}
