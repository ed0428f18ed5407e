package anthropic

import (
	"encoding/binary"
	"unicode/utf8"
)

// appendString appends s as a JSON string literal, exactly as
// rawjson.AppendString does (the same escapes; invalid UTF-8 becomes
// U+FFFD), but skips runs of plain ASCII eight bytes at a time: text is most
// of every body and event the encoders write.
func appendString(dst []byte, s string) []byte {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	dst = append(dst, '"')
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) {
			w := binary.LittleEndian.Uint64(bytesOf(s[i : i+8]))
			q, e := w^'"'*ones, w^'\\'*ones
			if ((w-0x20*ones)&^w|(q-ones)&^q|(e-ones)&^e|w)&highs != 0 {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"
