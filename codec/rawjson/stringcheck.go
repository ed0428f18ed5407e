package rawjson

import "encoding/binary"

// CheckString returns the offset just past the JSON string that starts at
// b[i] (a quote), checked as Valid checks strings, or -1 when it is not
// one; plain reports that its contents need no decoding: no escapes, and
// nothing but ASCII. Plain contents, the common case, are read eight bytes
// at a time in one pass; others are checked from the start by Valid's
// loop.
func CheckString(b []byte, i int) (end int, plain bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	for j := i + 1; ; j++ {
		for ; j+8 <= len(b); j += 8 {
			w := binary.LittleEndian.Uint64(b[j:])
			q, e := w^'"'*ones, w^'\\'*ones // zero bytes where w has '"' or '\\'
			if ((w-0x20*ones)&^w|(q-ones)&^q|(e-ones)&^e|w)&highs != 0 {
				break
			}
		}
		if j >= len(b) {
			return -1, false
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			if end = validValue(b, i, nil, nil, 0); end < 0 {
				return -1, false
			}
			return end, false
		}
	}
}
