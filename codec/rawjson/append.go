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
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) {
			if m := escapeMask(load64(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
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

// Plain reports whether AppendEscaped appends s as it is: s has no
// control character, '"', '\\' or byte of 0x80 or more. It reads s eight
// bytes at a time, the last word overlapping the one before, so a short
// name costs a word or two where AppendEscaped's loop over the bytes past
// its last whole word costs more than the rest.
func Plain(s string) bool {
	if len(s) < 8 {
		for i := range len(s) {
			if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	for i := 0; ; i += 8 {
		i = min(i, len(s)-8)
		if escapeIn(load64(s, i)) {
			return false
		}
		if i == len(s)-8 {
			return true
		}
	}
}

// escapeIn reports whether one of w's bytes is below 0x20, '"', '\\' or
// 0x80 or more.
func escapeIn(w uint64) bool { return escapeMask(w) != 0 }

// escapeMask has the high bit set of each byte of w that is below 0x20,
// '"', '\\' or 0x80 or more, and maybe of bytes above the first such
// (special's borrows): the lowest bit set is exact.
func escapeMask(w uint64) uint64 { return (special(w) | w) & 0x8080808080808080 }

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
