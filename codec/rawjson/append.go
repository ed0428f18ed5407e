package rawjson

import (
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a JSON string literal. Invalid UTF-8 is
// replaced by U+FFFD so that the output is always valid JSON. Runs of plain
// ASCII are skipped eight bytes at a time: text is most of every body and
// stream event the encoders write.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends s escaped as the inside of a JSON string, without
// the quotes, as AppendString writes it. Each word read jumps to its first
// byte to look at (a quote, a backslash, a control or non-ASCII byte: the
// lowest byte the bit tricks flag is exact), and a valid two-byte UTF-8
// sequence is passed over without decoding it.
func AppendEscaped(dst []byte, s string) []byte {
	if len(s) < 8 && plainShort(s) {
		return append(dst, s...) // a short name, as most are: no word to read
	}
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) {
			if m := EscapeMask(load64(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i+8 > len(s) && len(s) >= 8 && EscapeMask(load64(s, len(s)-8)) == 0 {
			break // the bytes left, read as the last word, need nothing
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			if c >= 0xc2 && c < 0xe0 && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
				i += 2 // U+0080 to U+07FF
				continue
			}
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
	return append(dst, s[start:]...)
}

// plainShort reports whether s, shorter than a word, has no byte that
// AppendEscaped escapes or checks as UTF-8.
func plainShort(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// EscapeMask has the high bit set of each byte of w that AppendEscaped
// does not copy as it is: a quote, a backslash, a control byte or one above
// 0x7f (a UTF-8 sequence's, checked apart), and no other bit. Each test
// runs on a byte's low seven bits, where no sum carries into the next byte,
// so every byte flagged is one of those (where the usual borrow tricks flag
// bytes above the first too), in fewer operations.
func EscapeMask(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	t := w &^ highs
	fine := (t + 0x60*ones) & // the high bit set where t >= 0x20
		((t ^ '"'*ones) + 0x7f*ones) & ((t ^ '\\'*ones) + 0x7f*ones) // where t is not '"', not '\\'
	return (w | ^fine) & highs
}

// AppendStringOrNull appends s as a JSON string literal, or null when s is
// empty.
func AppendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return AppendString(dst, s)
}

// load64 reads s[i:i+8] as a little-endian word (the compiler makes this one load).
// (The word is sliced first: one bounds check, where indexing s at i+1 to
// i+7 would check each.)
func load64(s string, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}
