package rawjson

// hexValue is the value of each hex digit, -1 for any other byte: hex4
// reads an escape's four digits by four lookups (Gemini escapes <, >, &
// and = as \uXXXX, so nearly every Gemini text has some).
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

// hex4 returns the value of the four hex digits at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	r := rune(hexValue[s[0]])<<12 | rune(hexValue[s[1]])<<8 | rune(hexValue[s[2]])<<4 | rune(hexValue[s[3]])
	return max(r, -1) // negative when a byte is not a digit: -1 has every bit set
}
