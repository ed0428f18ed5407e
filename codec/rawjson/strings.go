package rawjson

import (
	"bytes"
	"encoding/binary"
)

// ValidStrings reports whether the strings of the JSON document b hold no
// control characters and only valid escapes, which sonic.Valid does not
// check. b must be structurally valid (sonic.Valid): every quote outside a
// string then opens one. String contents are read eight bytes at a time.
func ValidStrings(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for {
		q := bytes.IndexByte(b[i:], '"') // the next string
		if q < 0 {
			return true
		}
		i += q + 1
	inString:
		for {
			for ; i+8 <= len(b); i += 8 {
				w := binary.LittleEndian.Uint64(b[i:])
				q, e := w^'"'*ones, w^'\\'*ones // zero bytes where w has '"' or '\\'
				if ((w-0x20*ones)&^w|(q-ones)&^q|(e-ones)&^e)&highs != 0 {
					break
				}
			}
			if i >= len(b) {
				return false
			}
			switch c := b[i]; {
			case c == '"':
				i++
				break inString
			case c == '\\':
				n := escapeLen(b[i:])
				if n == 0 {
					return false
				}
				i += n
			case c < 0x20:
				return false
			default:
				i++
			}
		}
	}
}

// escapeLen returns the length of the valid escape at the start of s, or 0.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(s) >= 6 && isHex(s[2]) && isHex(s[3]) && isHex(s[4]) && isHex(s[5]) {
			return 6
		}
	}
	return 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
