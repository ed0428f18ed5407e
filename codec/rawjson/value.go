package rawjson

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values; KindInvalid is none of them.
const (
	KindInvalid Kind = iota
	KindString
	KindNumber
	KindObject
	KindArray
	KindTrue
	KindFalse
	KindNull
)

// KindOf reports the kind of a value span by its first byte (cheap, no validation).
func KindOf(v []byte) Kind {
	if len(v) == 0 {
		return KindInvalid
	}
	switch c := v[0]; {
	case c == '"':
		return KindString
	case c == '-' || '0' <= c && c <= '9':
		return KindNumber
	case c == '{':
		return KindObject
	case c == '[':
		return KindArray
	case c == 't':
		return KindTrue
	case c == 'f':
		return KindFalse
	case c == 'n':
		return KindNull
	}
	return KindInvalid
}

// StringBytes returns the contents of a JSON string value span without the quotes, without
// copying, when it contains no escapes; ok is false if v is not a string or contains escapes.
func StringBytes(v []byte) (s []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	s = v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, false
	}
	return s, true
}

// Unquote returns the contents of the JSON string value span v: a view of v
// (UnsafeString) when it has no escapes, a new string otherwise. It fails as
// AppendUnquote does, for a value that is not a string or an invalid escape.
func Unquote(v []byte) (string, error) {
	if s, ok := StringBytes(v); ok {
		return UnsafeString(s), nil
	}
	b, err := AppendUnquote(make([]byte, 0, len(v)), v)
	if err != nil {
		return "", err
	}
	return UnsafeString(b), nil
}

// StringEnd returns the offset just past the JSON string that starts at
// b[i] (a quote), or -1 when b[i] is not a quote or the string does not
// end. It jumps from quote to quote (long base64 strings are the common
// case) and counts the backslashes before each; it does not validate the
// contents.
func StringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
		}
		j += q
		n := 0
		for j-1-n > i && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// ValueEnd returns the offset just past the JSON value that starts at
// b[i], or -1. It frames values of a document checked already, without
// checking them: containers are matched by depth, strings passed over
// from quote to quote (StringEnd), scalars end at the next delimiter.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = StringEnd(b, j); j < 0 {
					return -1
				}
				j-- // at the closing quote
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i // a number or a literal
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !IsSpace(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// AppendUnquote appends the decoded contents of the JSON string value span v to dst. It decodes
// every escape, including \uXXXX and surrogate pairs, and replaces unpaired surrogates and
// invalid UTF-8 with U+FFFD, as encoding/json does. An invalid escape is a *SyntaxError whose
// offset is in v; other string contents, such as control characters, are not checked.
func AppendUnquote(dst, v []byte) ([]byte, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return dst, &SyntaxError{Offset: 0, Msg: "want a JSON string"}
	}
	s := v[1 : len(v)-1]
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return AppendUTF8(dst, s), nil
		}
		dst = AppendUTF8(dst, s[:i])
		r, n := decodeEscape(s[i:])
		if n == 0 {
			return dst, &SyntaxError{Offset: len(v) - 1 - len(s) + i, Msg: "invalid escape"}
		}
		dst = utf8.AppendRune(dst, r)
		s = s[i+n:]
	}
	return dst, nil
}

// RuneCount is the number of characters (Unicode code points) the JSON
// string value span v decodes to, as AppendUnquote decodes it, counted
// without decoding it; ok is false when v is not a string or has an
// invalid escape.
func RuneCount(v []byte) (n int, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, false
	}
	s := v[1 : len(v)-1]
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return n + utf8.RuneCount(s), true
		}
		_, m := decodeEscape(s[i:])
		if m == 0 {
			return 0, false
		}
		n += utf8.RuneCount(s[:i]) + 1
		s = s[i+m:]
	}
	return n, true
}

// AppendUTF8 appends s to dst, replacing each byte of invalid UTF-8 with
// U+FFFD, as encoding/json and sonic do.
func AppendUTF8(dst, s []byte) []byte {
	if validUTF8(s) {
		return append(dst, s...)
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s) // r is U+FFFD for an invalid byte
		dst = utf8.AppendRune(dst, r)
		s = s[n:]
	}
	return dst
}

// decodeEscape decodes the escape sequence at the start of s, which begins with a backslash.
// A valid surrogate pair is one rune and any other surrogate is U+FFFD, as in encoding/json.
// n is the length of the sequence, or 0 if it is invalid.
func decodeEscape(s []byte) (r rune, n int) {
	r, n, _ = DecodeEscape(s)
	return r, n
}

// DecodeEscape is decodeEscape that also reports whether the sequence was
// a lone surrogate, which it turns into U+FFFD (lone is then true): a
// reader that must match another decoder's handling of those can decline.
func DecodeEscape(s []byte) (r rune, n int, lone bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch c := s[1]; c {
	case '"', '\\', '/':
		return rune(c), 2, false
	case 'b':
		return '\b', 2, false
	case 'f':
		return '\f', 2, false
	case 'n':
		return '\n', 2, false
	case 'r':
		return '\r', 2, false
	case 't':
		return '\t', 2, false
	case 'u':
		r := hex4(s[2:])
		if r < 0 {
			return 0, 0, false
		}
		if !utf16.IsSurrogate(r) {
			return r, 6, false
		}
		if len(s) >= 8 && s[6] == '\\' && s[7] == 'u' {
			if pair := utf16.DecodeRune(r, hex4(s[8:])); pair != utf8.RuneError {
				return pair, 12, false
			}
		}
		return utf8.RuneError, 6, true
	}
	return 0, 0, false
}

// ObjectEmpty reports whether the object value span v is `{}` (whitespace allowed inside).
func ObjectEmpty(v []byte) bool { return empty(v, '{', '}') }

// ArrayEmpty reports whether the array value span v is `[]` (whitespace allowed inside).
func ArrayEmpty(v []byte) bool { return empty(v, '[', ']') }

func empty(v []byte, opening, closing byte) bool {
	if len(v) < 2 || v[0] != opening || v[len(v)-1] != closing {
		return false
	}
	for _, c := range v[1 : len(v)-1] {
		if !IsSpace(c) {
			return false
		}
	}
	return true
}
