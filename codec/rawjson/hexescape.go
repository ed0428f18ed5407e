package rawjson

// hexValue is the value of each hex digit, -1 for any other byte.
var hexValue = func() (t [256]int8) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = int8(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = int8(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = int8(c - 'A' + 10)
		default:
			t[c] = -1
		}
	}
	return t
}()

// BMPEscape returns the code point of the escape \uXXXX at b[i] (a
// backslash) when it is not a surrogate, or -1: the escape DecodeEscape
// reads the same in six bytes, read by four lookups where DecodeEscape
// tries each digit's ranges (Gemini escapes <, >, & and = so in nearly
// every text). Any other escape is DecodeEscape's.
func BMPEscape(b []byte, i int) rune {
	if len(b)-i < 6 || b[i+1] != 'u' {
		return -1
	}
	h := b[i+2 : i+6]
	r := rune(hexValue[h[0]])<<12 | rune(hexValue[h[1]])<<8 | rune(hexValue[h[2]])<<4 | rune(hexValue[h[3]])
	if r < 0 || r >= 0xd800 && r < 0xe000 { // (negative when a digit is not one: -1 has every bit set)
		return -1
	}
	return r
}
