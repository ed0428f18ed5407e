package rawjson

import (
	"bytes"
	"encoding/binary"
)

// ValidStrings reports whether the strings of the JSON document b hold no
// control characters and only valid escapes, which sonic.Valid does not
// check. b must be structurally valid (sonic.Valid).
//
// In such a document a backslash is always inside a string, and read left
// to right each one starts an escape; only control characters need to know
// whether they are inside a string (whitespace between tokens is not). So
// the document is read eight bytes at a time for backslashes and control
// characters alone, checking each escape where it is; the first control
// character hands the document to validStringsQuoted, which follows the
// quotes. Compact JSON, what SDKs send, never gets there, nor does one
// that only ends with a newline. A document that is not an object or an
// array goes there at once: sonic.Valid takes a lone
// string of 32 bytes or more without its closing quote, which only
// following the quotes catches.
func ValidStrings(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	if i == len(b) || b[i] != '{' && b[i] != '[' {
		return validStringsQuoted(b)
	}
	// Spaces after the closing bracket are outside any string: a newline
	// there (a body sent from a file) need not take the slow path.
	for len(b) > i && IsSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	for i < len(b) {
		if i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			e := w ^ '\\'*ones // zero bytes where w has '\\'
			if ((w-0x20*ones)&^w|(e-ones)&^e)&highs == 0 {
				i += 8
				continue
			}
		}
		switch c := b[i]; {
		case c == '\\':
			n := EscapeLen(b[i:])
			if n == 0 {
				return false
			}
			i += n
		case c < 0x20:
			return validStringsQuoted(b)
		default:
			i++
		}
	}
	return true
}

// validStringsQuoted is ValidStrings following the quotes: every quote
// outside a string opens one. String contents are read eight bytes at a
// time.
func validStringsQuoted(b []byte) bool {
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
				n := EscapeLen(b[i:])
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

// EscapeLen returns the length of the valid escape (a backslash and what
// follows) at the start of s, or 0.
func EscapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(s) >= 6 && hex4(s[2:]) >= 0 {
			return 6
		}
	}
	return 0
}
