package rawjson

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// validUTF8 is utf8.Valid for text that is mostly ASCII with a few other
// characters (a delta's text, "°C", "é"): utf8.Valid reads the rest of its
// input a byte at a time after its first non-ASCII byte, where this goes
// back to reading words after each character. A two-byte sequence is
// checked inline.
func validUTF8(s []byte) bool {
	const highs = 0x8080808080808080
	i := 0
	for {
		for ; i+8 <= len(s); i += 8 {
			if m := binary.LittleEndian.Uint64(s[i:]) & highs; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		for i < len(s) && s[i] < utf8.RuneSelf {
			i++
		}
		if i >= len(s) {
			return true
		}
		if c := s[i]; c >= 0xc2 && c < 0xe0 && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			i += 2 // U+0080 to U+07FF
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
}
