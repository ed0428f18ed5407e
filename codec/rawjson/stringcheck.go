package rawjson

import (
	"encoding/binary"
	"math/bits"
)

// CheckString returns the offset just past the JSON string that starts at
// b[i] (a quote), checked as Valid checks strings, or -1 when it is not
// one; plain reports that its contents need no decoding: no escapes, and
// nothing but ASCII.
func CheckString(b []byte, i int) (end int, plain bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	return checkedStringEnd(b, i+1)
}

// checkedStringEnd returns the offset just past the closing quote of the
// string whose contents start at b[i], or -1 when valid contents (no
// control character, only valid escapes) do not run to a quote: Valid's
// reading of a string without its setup for documents, for a string on
// its own (a delta's text, a member read by itself). Each word read jumps
// to its first quote, backslash or control character; bytes above 0x7f
// are passed over, only noted: plain reports contents with no escape and
// nothing but ASCII.
func checkedStringEnd(b []byte, i int) (end int, plain bool) {
	const highs = 0x8080808080808080
	var seen uint64 // the bytes passed over, ORed: its high bits tell non-ASCII
	escaped := false
	for {
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			if m := special(w); m != 0 {
				n := bits.TrailingZeros64(m) >> 3
				seen |= w & (1<<(n*8) - 1) // the bytes before the special one
				i += n
				break
			}
			seen |= w
		}
		for ; i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\'; i++ {
			seen |= uint64(b[i])
		}
		if i >= len(b) || b[i] < 0x20 {
			return -1, false
		}
		if b[i] == '"' {
			return i + 1, !escaped && seen&highs == 0
		}
		n := EscapeLen(b[i:])
		if n == 0 {
			return -1, false
		}
		i, escaped = i+n, true
	}
}
