package rawjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// Valid reports whether b is one JSON value, with whitespace around it
// allowed: it accepts exactly what encoding/json.Valid accepts. Like
// encoding/json it checks string contents (no control characters, only
// valid escapes) but not their UTF-8, and it refuses nesting deeper than
// 10000 containers. It never allocates.
//
// It is one pass written for the small documents of a stream, in place of
// sonic.Valid (which does not check string contents): a chunk of a few
// hundred bytes costs about what sonic.Valid costs, a smaller one a
// fraction (most of sonic.Valid's cost is fixed), and a document of a few
// KB somewhat more; long strings (base64) go to vectorized searches, so a
// megabyte image costs a fraction of sonic.Valid with ValidStrings.
func Valid(b []byte) bool { return ValidKeys(b, nil, nil) }

// ValidKeys is Valid that also finds members by their key: at[k] is set to
// the offset of the value of the first member, at any depth and in
// document order, whose key is spelled keys[k] between its quotes (escapes
// are not decoded, so "mod\u0065l" is not "model"), or to -1 when there is
// none. at must be as long as keys, and each key shorter than 64 bytes.
// The offsets mean nothing when b is not valid.
//
// In a valid document, the first member so named is where the first
// unescaped `"key"` that a colon follows is: a relay that looks for a key
// that way can have it from the check instead of a search.
func ValidKeys(b []byte, keys []string, at []int) bool { return ValidKeysScoped(b, keys, at, 0) }

// ValidTopKeys is ValidKeys for the members of the top-level object
// alone: a member so named in a nested value is passed over.
func ValidTopKeys(b []byte, keys []string, at []int) bool {
	return ValidKeysScoped(b, keys, at, ^uint64(0))
}

// ValidKeysScoped is ValidKeys for the keys whose bit in top is 0 and
// ValidTopKeys for those whose bit is 1 (bit k for keys[k]): one pass finds
// a stream chunk's model wherever it is first and its usage among the
// top-level members.
func ValidKeysScoped(b []byte, keys []string, at []int, top uint64) bool {
	var f *finder
	var fs finder
	if len(keys) > 0 {
		fs = finder{keys: keys, at: at[:len(keys)], top: top}
		for k, key := range keys {
			fs.at[k] = -1
			fs.lens |= 1 << len(key)
		}
		fs.left = len(keys)
		f = &fs
	}
	end := validValue(b, SkipSpace(b, 0), f, nil, maxDepth)
	if end == errDeep {
		end = validDeep(b, SkipSpace(b, 0), f, maxDepth)
	}
	return end >= 0 && SkipSpace(b, end) == len(b)
}

// validDeep is validValue with room for limit levels of nesting, for a
// value nested deeper than 63 (which no API sends): it is apart so that
// the common case does not clear a 1.3 KB stack.
//
//go:noinline
func validDeep(b []byte, i int, f *finder, limit int) int {
	var deep stackWords
	return validValue(b, i, f, &deep, limit)
}

// finder is what ValidKeys looks for, and what it found.
type finder struct {
	keys []string
	at   []int
	lens uint64 // bit n set when a key is n bytes long
	left int    // keys not found yet
	top  uint64 // bit k set: keys[k] is looked for among the top-level members only
	// mark, when not 0, is the first 8 bytes of a string value to look
	// for (little-endian); marked is set when one starts so.
	mark   uint64
	marked bool
}

// found notes that the key b[ks:ke] introduces the value at v; top says
// the key is a member of the top-level object. validValue calls it for a
// key whose length modulo 64 is one of lens (a shift without a test of
// its range): a longer key is compared in vain, not missed.
func (f *finder) found(b []byte, ks, ke, v int, top bool) {
	for k, key := range f.keys {
		if f.at[k] < 0 && (top || f.top>>k&1 == 0) && string(b[ks:ke]) == key {
			f.at[k] = v
			if f.left--; f.left == 0 {
				f.lens = 0 // nothing more to compare
			}
		}
	}
}

// stackWords is validValue's stack past its first word, room for
// encoding/json's nesting limit, and the limit it holds a value to. A
// pointer to it (nil but for validDeep) holds one register where a slice
// and the limit held four.
type stackWords struct {
	words [(maxDepth + 62) / 63]uint64
	d     int // the words in use
	limit int
}

// The failures of validValue: errSyntax for invalid JSON, errDeep for
// nesting deeper than its stack (which does not imply invalid JSON).
const (
	errSyntax = -1
	errDeep   = -2
)

// validValue checks the JSON value that starts at b[i] and returns the
// offset just past it, or errSyntax. Its stack is a word for 63 levels of
// nesting, then the words of deep, if any: past them it returns errDeep.
// The value may nest limit levels deep. f, if not nil, collects keys.
//
// It is one loop over the tokens, without calls but for numbers, and it
// takes the separators of compact JSON (`":"`, `","`, `{"`) in one step:
// a call or a mispredicted branch per token costs more than most strings
// of a stream chunk.
func validValue(b []byte, i int, f *finder, deep *stackWords, limit int) int {
	b = b[:len(b):len(b)] // its capacity is its length: a register less
	// stack has a bit for each open container, 1 for an array, the
	// innermost lowest, above a 1 that marks the bottom: 1 is no
	// container open. When it holds 63, it moves to deep[d] and starts
	// again from 1.
	stack := uint64(1)
	if deep != nil {
		deep.limit = limit // only a stack past 63 levels can reach it
		deep.d = 0
	}
	key := false // the string at i is an object key
	ks := 0      // where the last string's contents start
	quote := -1  // the first quote at or after it that longString found
	var c byte

value: // i is at the start of a value, or of a key when key is set
	if i >= len(b) {
		return errSyntax
	}
	c = b[i]
	if c == '"' {
		i++
		goto str
	}
	if key {
		return errSyntax
	}
	switch c {
	case '{', '[':
		if stack>>63 != 0 {
			if deep == nil || deep.d == len(deep.words) {
				return errDeep
			}
			deep.words[deep.d] = stack
			deep.d++
			stack = 1
		}
		if deep != nil && deep.d > 0 && 63*deep.d+bits.Len64(stack)-1 >= deep.limit {
			return errSyntax // encoding/json's limit
		}
		i++
		if c == '{' && i < len(b) && b[i] == '"' {
			stack <<= 1
			i++
			key = true
			goto str
		}
		if i < len(b) && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		if i < len(b) && b[i] == c+2 { // '{'+2 is '}' and '['+2 is ']'
			i++
			if stack == 1 && deep != nil && deep.d > 0 {
				deep.d--
				stack = deep.words[deep.d]
			}
			goto after // an empty container is a complete value
		}
		stack <<= 1
		if c == '[' {
			stack |= 1
		} else {
			key = true
		}
		goto value
	case 't':
		if len(b)-i < 4 || string(b[i:i+4]) != "true" {
			return errSyntax
		}
		i += 4
	case 'f':
		if len(b)-i < 5 || string(b[i:i+5]) != "false" {
			return errSyntax
		}
		i += 5
	case 'n':
		if len(b)-i < 4 || string(b[i:i+4]) != "null" {
			return errSyntax
		}
		i += 4
	default:
		if c-'1' <= 8 && stack&1 == 0 {
			if e := shortInteger(b, i); e > 0 {
				i = e // a member's integer (a count, an index)
				goto after
			}
		} else if c == '0' && stack&1 == 0 && i+1 < len(b) && b[i+1] != '.' && b[i+1]|0x20 != 'e' {
			i++ // a member's 0: what follows ends it, as validNumber reads it
			goto after
		}
		if stack&1 == 1 && stack != 1 {
			i = numbers(b, i) // an array's elements: an embedding's floats
		} else {
			i = validNumber(b, i)
		}
		if i < 0 {
			return errSyntax
		}
	}
	goto after

str: // i is just past the opening quote of a string
	ks = i
	if !key && f != nil && f.mark != 0 && i+8 <= len(b) && word(b, i) == f.mark {
		f.marked = true
	}
	for {
		// The string's first quote, backslash or control character, two
		// words a turn (SWAR, special): keys, ids and model names end in
		// their first two words. Past the string's first 32 bytes (prose:
		// a conversation's turns; base64) it goes to longString's
		// vectorized searches, which cost less from there on (after 48
		// bytes, a 3 KB conversation cost 4 % more; after 16, a stream
		// chunk's id went there and the chunk cost 4 % more); plainRun is
		// called here where AVX2 runs it, without longString's call.
		for i+16 <= len(b) {
			if m := special(word(b, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto flagged
			}
			if m := special(word(b, i+8)); m != 0 {
				i += 8 + bits.TrailingZeros64(m)>>3
				goto flagged
			}
			if i += 16; i-ks >= 32 {
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
		}
		if i+8 <= len(b) {
			if m := special(word(b, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto flagged
			}
			i += 8
		}
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			i++ // the last bytes of b
		}
	flagged: // b[i] is a quote, a backslash or a control character, or i is len(b)
		if i >= len(b) {
			return errSyntax // unterminated
		}
		if c = b[i]; c == '"' {
			i++
			break
		}
		if c != '\\' || i+1 >= len(b) {
			return errSyntax // a control character, or a backslash at the end
		}
		switch escapes[b[i+1]] {
		case 2:
			i += 2
		case 6:
			if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
				return errSyntax
			}
			i += 6
		default:
			return errSyntax
		}
	}
	// i is just past the closing quote of a string.
	if key {
		key = false
		ke := i - 1
		if i+2 <= len(b) && pair(b, i) == ':'|'"'<<8 {
			i += 2
			if f != nil && f.lens>>((ke-ks)&63)&1 != 0 {
				f.found(b, ks, ke, i-1, stack == 2 && (deep == nil || deep.d == 0))
			}
			goto str
		}
		if i < len(b) && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		i++
		if i < len(b) && b[i] <= ' ' {
			if b[i] == ' ' && i+1 < len(b) && b[i+1] > ' ' {
				i++ // one space, as in `": "`
			} else {
				i = skipSpace(b, i)
			}
		}
		if f != nil && f.lens>>((ke-ks)&63)&1 != 0 {
			f.found(b, ks, ke, i, stack == 2 && (deep == nil || deep.d == 0))
		}
		goto value
	}

after: // a value is complete: close the containers it completes, then
	// move to the next element
	if stack == 1 {
		return i
	}
	if stack&1 == 0 && i+2 <= len(b) && pair(b, i) == ','|'"'<<8 {
		i += 2
		key = true
		goto str
	}
	if i < len(b) && b[i] <= ' ' {
		i = skipSpace(b, i)
	}
	if i >= len(b) {
		return errSyntax
	}
	switch c = b[i]; {
	case c == ',':
		i++
		if i < len(b) && b[i] <= ' ' {
			if b[i] == ' ' && i+1 < len(b) && b[i+1] > ' ' {
				i++ // one space, as in `": "`
			} else {
				i = skipSpace(b, i)
			}
		}
		key = stack&1 == 0
		goto value
	case c == ']' && stack&1 == 1, c == '}' && stack&1 == 0:
		i++
		if stack >>= 1; stack&1 == 1 && stack != 1 && i+3 <= len(b) && quad(b, i-1) == '}'|','<<8|'{'<<16|'"'<<24 {
			i++ // `},{"`: the next object of an array (a conversation's messages)
			goto value
		}
		if stack == 1 && deep != nil && deep.d > 0 {
			deep.d--
			stack = deep.words[deep.d]
		}
		goto after
	}
	return errSyntax
}

// longString returns the offset of the first quote, backslash or control
// character at or after b[i], or len(b), for a string that has run long
// (base64; b[i-8:i] are its contents, passed already). Where the CPU has
// AVX2 (vectorRuns), plainRun finds all three in one read of 32 bytes an
// instruction. Elsewhere the quote and the backslash are found with
// vectorized searches, which leaves only control characters to a look at
// each word, four at a time; quote is the first
// quote at or after b[i] when it is not below i, as a call before found it
// (an escape between the two calls): the search for it is not made again,
// which would read a long string once per escape. It is returned for the
// next call.
func longString(b []byte, i, quote int) (int, int) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if vectorRuns {
		// One read of each byte for all three: the search stops at any of
		// them, so a string is read once however many escapes it holds.
		whole := (len(b) - i) &^ 31
		if j := plainRun(b[i:]); j < whole {
			return i + j, quote
		}
		return tailSpecial(b, i+whole), quote
	}
	if quote < i {
		if quote >= 0 && countSearches { // the quote found before was escaped
			searchedAgain.Add(1)
		}
		if quote = bytes.IndexByte(b[i:], '"'); quote >= 0 {
			quote += i
		} else {
			quote = len(b)
		}
	}
	end := quote
	if e := bytes.IndexByte(b[i:end], '\\'); e >= 0 {
		end = i + e
	}
	for ; i+32 <= end; i += 32 {
		w0, w1, w2, w3 := word(b, i), word(b, i+8), word(b, i+16), word(b, i+24)
		if ((w0-0x20*ones)&^w0|(w1-0x20*ones)&^w1|(w2-0x20*ones)&^w2|(w3-0x20*ones)&^w3)&highs != 0 {
			break
		}
	}
	for ; i+8 <= end; i += 8 {
		w := word(b, i)
		if m := (w - 0x20*ones) &^ w & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3, quote
		}
	}
	if i < end {
		// The last bytes, in the word that ends with them: the bytes
		// before b[i] in it are the string's, passed already (validValue
		// calls this 48 bytes into a string).
		w := word(b, end-8)
		if m := (w - 0x20*ones) &^ w & highs; m != 0 {
			return end - 8 + bits.TrailingZeros64(m)>>3, quote
		}
	}
	return end, quote
}

// tailSpecial is longString's search in b's last bytes, from b[i], fewer
// than 32: a word at a time, the last one the word ending with b. Its bytes
// before b[i], if any, are plain: longString's callers pass i with
// i+8 <= len(b) (what lies before an escape) or with b[i-8:i] passed.
func tailSpecial(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := special(word(b, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i < len(b) {
		if m := special(word(b, len(b)-8)); m != 0 {
			return len(b) - 8 + bits.TrailingZeros64(m)>>3
		}
	}
	return len(b)
}

// searchedAgain counts longString's searches for a quote made again, the
// one found before being escaped: each runs from that quote to the next,
// so a string is read in linear time when there are no more of them than
// escaped quotes (a test's measure, counted only when countSearches is
// set, so that requests on several cores share no counter; the first
// search keeps no state for it).
var (
	searchedAgain atomic.Int64
	countSearches bool
)

// skipSpace is SkipSpace for validValue, which calls it only at
// whitespace. Indented JSON (OpenAI's responses) has runs of a newline and
// spaces: it takes them eight bytes at a time, as far as the first byte
// above a space, when they hold nothing but newlines and spaces.
func skipSpace(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		// Exact per byte (no carry crosses a byte): the high bit of a byte
		// of above is set when the byte is above 0x20; of ws, when it is a
		// space or a newline.
		above := ((w &^ highs) + (0x7f-0x20)*ones | w) & highs
		s, n := w^' '*ones, w^'\n'*ones
		ws := ^((s&^highs + ^uint64(highs)) | s) & highs
		ws |= ^((n&^highs + ^uint64(highs)) | n) & highs
		run := above&-above - 1 // the bits below the first byte above a space
		if above == 0 {
			run = ^uint64(0)
		}
		if run&highs&^ws != 0 {
			break // a tab, a carriage return or a control character: a byte at a time
		}
		if above != 0 {
			return i + bits.TrailingZeros64(above)>>3
		}
		i += 8
	}
	return SkipSpace(b, i)
}

// escapes has the length of each escape by the byte after its backslash,
// 0 for none: \uXXXX still needs its four hex digits checked.
var escapes = [256]uint8{'"': 2, '\\': 2, '/': 2, 'b': 2, 'f': 2, 'n': 2, 'r': 2, 't': 2, 'u': 6}

// special has the high bit set in each byte of w that is a quote, a
// backslash or below 0x20, and in no byte below the lowest of those; bytes
// above it may be flagged too. Its other bits are 0.
//
// A quote xor 2 is a space, and a control character xor 2 is still one: a
// byte's difference with 0x21 once xored with 2 has its high bit set when
// it is a quote or a control character, its difference with 1 once xored
// with a backslash when it is one, and either when the byte was at 0x80 or
// above, which w's own high bit tells; a borrow only leaves a flagged
// byte. Two constants fewer than a test for each of the three: this runs
// on every word of every string.
func special(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	qc := w ^ 2*ones    // a quote is a space, a control character is one still
	bs := w ^ '\\'*ones // a backslash is 0
	return ((qc - 0x21*ones) | (bs - ones)) &^ w & highs
}

// validNumber checks the number at b[i] by the JSON grammar,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and returns the offset
// just past it, or errSyntax. What follows is the caller's to check (01 is
// the number 0 followed by 1, which no container or document accepts).
func validNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return errSyntax
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i = digits(b, i+1)
	default:
		return errSyntax
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return errSyntax
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return errSyntax
		}
		i = j
	}
	return i
}

// shortInteger is validNumber for the commonest number, an integer of up
// to 7 digits at b[i], which is a digit from 1 to 9, read from the word
// there without a call: the offset just past it, or 0 when the number
// there is not such (longer, with a fraction or an exponent, near b's end)
// for validNumber to read. On any other byte at b[i] it returns i or 0,
// never more (Form.Read calls it so).
func shortInteger(b []byte, i int) int {
	if i+8 > len(b) {
		return 0
	}
	w := word(b, i)
	t := bits.TrailingZeros64(nonDigits(w)) >> 3 // 8: the word is all digits
	if c := byte(w >> (8 * t)); t < 8 && c != '.' && c|0x20 != 'e' {
		return i + t
	}
	return 0
}

// MaxCount is the largest count Count reads, and the bound the usage
// readers hold a count to however they read it (Gemini's, which reads a
// count written as a float too, holds it to 2^53): far past any real
// count, and a usage's counts summed cannot wrap to a negative one.
const MaxCount = 999_999_999_999_999_999

// Count reads the integer of 1 to 18 decimal digits at b[i] (a usage
// count; no int overflows), without a leading zero (0 alone is one): n is
// its value, end the offset just past its digits, or -1 when no such
// integer is there (a sign, a 19th digit). What follows the digits is the
// caller's to check: a digit (after a 0), a point or an exponent would
// continue the number.
func Count(b []byte, i int) (n, end int) {
	if i >= len(b) {
		return 0, -1
	}
	switch c := b[i]; {
	case c == '0':
		return 0, i + 1
	case c-'1' > 8:
		return 0, -1
	}
	for end = i; end < len(b) && b[end]-'0' <= 9; end++ {
		n = n*10 + int(b[end]-'0') // past 18 digits, n is not returned
	}
	if end-i > 18 {
		return 0, -1
	}
	return n, end
}

// numbers checks the number at b[i], an element of an array, and the
// numbers that follow it in that array, and returns the offset just past
// the last of them, or errSyntax: what follows it (not a comma and a
// number) is the caller's to check.
//
// An embedding is thousands of floats, which the checks of one number
// after another would take a byte or a branch at a time. Here a number is
// read from the two words at its start, loaded together: where their first
// non-digits are, once its sign is passed over, gives its integer part, its
// point and the end of its fraction, so that the next number's address
// waits on a few operations, and the branches but the sign's go the same
// way for every float (a branch on the sign measured faster than clearing
// its flag without one, random signs included). The numbers this does not
// take whole go to validNumber: a longer integer part, an exponent, a
// fraction that runs past the two words, the last bytes of b. The line
// break and indent between the floats of indented JSON are taken the same
// way.
func numbers(b []byte, i int) int {
	for {
		if i+16 > len(b) {
			return validNumber(b, i)
		}
		w := b[i : i+16] // one bounds check for the two loads
		lo := binary.LittleEndian.Uint64(w)
		nd, hi := nonDigits(lo), nonDigits(binary.LittleEndian.Uint64(w[8:]))
		// A minus is the lowest flag, with one bit; s is 1 with it.
		s := 0
		if byte(lo) == '-' {
			s, nd = 1, nd&(nd-1)
		}
		t := bits.TrailingZeros64(nd) >> 3 // the integer part is b[i+s:i+t]
		n := t                             // the number's length, if an integer
		if uint(t-s-1) >= uint(7-s) || t > s+1 && byte(lo>>(8*s)) == '0' {
			n = -1 // no digit, a long integer part or a leading zero: validNumber judges
		} else if byte(lo>>(8*t)) == '.' {
			// The point's flag is its nibble's one bit: without it, the
			// first flag is the fraction's end.
			n = 8 + bits.TrailingZeros64(hi)>>3
			if frac := nd & (nd - 1); frac != 0 {
				n = bits.TrailingZeros64(frac) >> 3
			}
			if n == t+1 {
				return errSyntax // no digit after the point
			}
			if n == 16 {
				n = -1 // a long fraction
			}
		}
		if n < 0 || w[n]|0x20 == 'e' { // or an exponent
			if i = validNumber(b, i); i < 0 || i >= len(b) || b[i] != ',' {
				return i
			}
		} else if i += n; w[n] != ',' {
			return i
		}
		// A comma: the next element, if a number, is taken here.
		j := i + 1
		if j >= len(b) {
			return i
		}
		if b[j] <= ' ' {
			k := 16
			if j+16 <= len(b) {
				// The line break and indent of indented JSON, from two words
				// as a number is.
				w := b[j : j+16]
				k = bits.TrailingZeros64(notBlank(binary.LittleEndian.Uint64(w))) >> 3
				k += -(k >> 3) & (bits.TrailingZeros64(notBlank(binary.LittleEndian.Uint64(w[8:]))) >> 3)
				j += k
			}
			if k == 16 {
				j = skipSpace(b, j)
			}
			if j >= len(b) {
				return i
			}
		}
		if c := b[j]; c != '-' && c-'0' > 9 {
			return i
		}
		i = j
	}
}

// notBlank flags the bytes of w that are neither spaces nor newlines, each
// exactly.
func notBlank(w uint64) uint64 {
	const ones, highs, lows = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	s, n := w^' '*ones, w^'\n'*ones
	return ((s&lows + lows) | s) & ((n&lows + lows) | n) & highs
}

// nonDigits flags the bytes of w that are not decimal digits, with a bit
// of their nibbles: see digits.
func nonDigits(w uint64) uint64 {
	const ones, nibbles = 0x0101010101010101, 0xf0f0f0f0f0f0f0f0
	return (w&nibbles ^ 0x30*ones) | ((w+6*ones)&nibbles ^ 0x30*ones)
}

// digits returns the offset of the first byte at or after b[i] that is not
// a decimal digit, or len(b). It looks at a word at a time (the fractions of
// an embedding's floats are 7 to 9 digits): a byte is a digit when its high
// nibble is 3, and still is once 6 is added to it (0x3a-0x3f become
// 0x40-0x45). A carry out of a byte, which only a byte from 0xfa up makes,
// can only alter the bytes after a flagged one.
func digits(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := nonDigits(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
