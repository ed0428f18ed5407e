package rawjson

import "math/bits"

// CheckString returns the offset just past the JSON string that starts at
// b[i] (a quote), checked as Valid checks strings, or -1 when it is not
// one; plain reports that its contents need no decoding: no escapes, and
// nothing but ASCII.
func CheckString(b []byte, i int) (end int, plain bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	if end, plain = stringEnd(b, i+1); plain {
		plain = ascii(b[i+1 : end-1])
	}
	return end, plain
}

// stringEnd returns the offset just past the closing quote of the string
// whose contents start at b[i], or -1 when valid contents (no control
// character, only valid escapes) do not run to a quote; plain reports
// contents without an escape. It is Valid's reading of a string without
// its setup for documents, for a string on its own (a member reader's
// key, an id, a delta's text): a word at a time to the first quote,
// backslash or control character; a string with an escape, or past its
// first 72 bytes (prose, base64), goes on in stringRest from where it is.
func stringEnd(b []byte, i int) (end int, plain bool) {
	long := i + 72
	for lim := min(len(b), long); i+8 <= lim; i += 8 {
		if m := special(word(b, i)); m != 0 {
			if i += bits.TrailingZeros64(m) >> 3; b[i] == '"' {
				return i + 1, true
			}
			return stringRest(b, i, long)
		}
	}
	if i+8 <= len(b) {
		return stringRest(b, i, long) // 72 bytes without a quote
	}
	for ; i < len(b); i++ { // the last bytes of b
		if c := b[i]; c == '"' {
			return i + 1, true
		} else if c == '\\' || c < 0x20 {
			return stringRest(b, i, long)
		}
	}
	return -1, false
}

// plainPrefix is the offset of the first quote, backslash or control
// character in the string whose contents start at b[i], when it lies in
// the whole words of its first 32 bytes (words that end within b): else
// the offset up to which those words are plain, a multiple of 8 bytes past
// i, whose byte is unread (or len(b)). A short string is read
// so where its reader is, without a call: its end when the byte there is
// a quote, else what stringRest reads on from there, with long 16 bytes
// further (longString, without AVX2, needs the 8 bytes before it passed).
func plainPrefix(b []byte, i int) int {
	j := i
	for end := min(i+32, len(b)-7); j < end; j += 8 { // j+8 <= len(b), j < i+32
		if m := special(word(b, j)); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	return j
}

// stringRest is stringEnd from b[i] on, where the string has an escape or
// has run long: past long, longString's vectorized searches find its next
// quote and backslash, and its quote is searched for once (not again after
// each escape).
func stringRest(b []byte, i, long int) (end int, plain bool) {
	quote := -1
	plain = true
	for {
		for lim := min(len(b), long); i+8 <= lim; i += 8 {
			if m := special(word(b, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto flagged
			}
		}
		if i+8 <= len(b) { // past long
			if vectorRuns { // longString's search written out: as a function it does not inline
				if j, whole := plainRun(b[i:]), (len(b)-i)&^31; j < whole {
					i += j
				} else {
					i = tailSpecial(b, i+whole)
				}
				goto flagged
			}
			i, quote = longString(b, i, quote)
			goto flagged
		}
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			i++ // the last bytes of b
		}
	flagged: // b[i] is a quote, a backslash or a control character, or i is len(b)
		if i >= len(b) {
			return -1, false
		}
		if c := b[i]; c == '"' {
			return i + 1, plain
		} else if c != '\\' {
			return -1, false
		}
		n := EscapeLen(b[i:])
		if n == 0 {
			return -1, false
		}
		// Escapes close together (code, a quoted dialogue) are read on by
		// words: longString's searches pay after 16 bytes without one.
		i, plain = i+n, false
		long = max(long, i+16)
	}
}

// ascii reports whether s is nothing but ASCII, a word at a time.
func ascii(s []byte) bool {
	const highs = 0x8080808080808080
	var seen uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		seen |= word(s, i)
	}
	for ; i < len(s); i++ {
		seen |= uint64(s[i])
	}
	return seen&highs == 0
}
