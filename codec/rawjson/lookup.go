// Package rawjson works on JSON bytes in place. Lookup finds the values of top-level keys in a
// JSON object without decoding it, and reports their byte spans so that callers can read them in
// place or splice in a replacement.
//
// Lookup checks the structure of the document (brackets, commas, colons, literals, numbers) but
// not the contents of strings (escapes, control characters, UTF-8): skipping a megabyte of base64
// must cost one vectorized search, not a look at every byte. LookupValid checks strings as well,
// in the same pass, and Valid checks a document of any kind; both accept what encoding/json.Valid
// accepts. Besides the standard library, the package imports sonic's decoder, whose native Skip
// Lookup uses on containers.
//
// Object reads an object whole, member by member, in one loop that calls its caller only for the
// keys it looks for (an answer and its usage; LookupValid's fields); Members and Elements are
// cursors for readers that stop or nest as they go.
//
// Where the instructions go (cachegrind, per line): a checked token costs 50-100 instructions,
// most of them in validValue's string loop: the compiler spills seven registers as a string
// starts (its state: the document, the stack of containers, the finder) and reloads them as it
// ends, about a tenth of a token's cost, and the word test (special: 14 instructions a word,
// five of them its constants) and the dispatch on the next byte most of the rest; a long
// string's vectorized search (plainRun) is ~100 instructions per string. A member of object's
// loop (an answer's, a request's top level) costs ~140 with the reading of its key, much of it
// the reloads of the loop's state after each call (visit, topValue). The common tokens are read
// without a call where the loop's registers are allocated no worse for it (a key of up to 32
// bytes, plainPrefix; an integer of up to 7 digits, shortInteger; `},{"` between the objects of
// an array), not where they are (a member's short string or integer in object's loop, a key's
// two words unrolled: each cost more than the call it saved). A structural index of each 64
// bytes walked by a loop of its own was tried and saved too little per token
// (docs/benchmarks.md).
package rawjson

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/bytedance/sonic/decoder"
)

// maxDepth is encoding/json's nesting limit (sonic's is lower), so Lookup rejects no document for
// its depth that either of them accepts.
const maxDepth = 10000

// Field names a top-level key; Lookup fills in where its value lies.
type Field struct {
	// Key is compared with the document's keys after JSON unescaping. Bytes outside escapes are
	// compared as they are, so invalid UTF-8 in a document key does not equal U+FFFD.
	Key string
	// Start and End delimit the value span b[Start:End], without surrounding whitespace.
	// Both are -1 when the key is absent.
	Start, End int
}

// SyntaxError reports malformed JSON.
type SyntaxError struct {
	Offset int    // byte offset of the problem in the input
	Msg    string // what was wrong there
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// Lookup scans the JSON object in b and fills the value spans of the requested top-level keys.
// With all == false it may stop as soon as every field is found (callers that already validated b,
// or that trust the source, use this); with all == true it scans to the end.
// It never panics and allocates only to return an error; on malformed input it returns a
// *SyntaxError.
//
// Keys are compared after JSON unescaping ("mod\u0065l" is "model"), and a requested key that
// appears twice at top level (in any spelling) is an error: a gateway that read the first "model"
// while the upstream reads the last one would be bypassed by an allow-list check. A duplicate that
// follows the point where all == false stops goes unnoticed, so access checks need all == true.
//
// The keys in fields should be distinct; of repeated ones only the first is filled in.
func Lookup(b []byte, fields []Field, all bool) error { return lookup(b, fields, all, false, nil) }

// LookupValid is Lookup with all == true that checks the whole document as encoding/json.Valid
// does, strings included: it accepts a document if and only if encoding/json.Valid accepts it
// and Lookup(b, fields, true) does (it is a JSON object, with no requested key repeated). It
// reads b once, where sonic.Valid, ValidStrings and Lookup read it three times; its errors for
// invalid JSON say less about the problem than Lookup's. It allocates only to return an error.
func LookupValid(b []byte, fields []Field) error { return lookup(b, fields, true, true, nil) }

// LookupValidMarked is LookupValid that also reports whether a string
// value of the document (not a key) starts with mark, 8 bytes compared
// as they are spelled: a check for a rare prefix costs nothing beside the
// check of the strings, where a search of the document would cost as much
// as the check (a request's signatures tagged by the gateway, see
// codec.HasSignatureTags).
func LookupValidMarked(b []byte, fields []Field, mark *[8]byte) (marked bool, err error) {
	f := finder{mark: binary.LittleEndian.Uint64(mark[:])}
	err = lookup(b, fields, true, true, &f)
	return f.marked, err
}

// lookup is Lookup; strict checks what LookupValid checks, and f, if not
// nil, is what the check of the values looks for.
func lookup(b []byte, fields []Field, all, strict bool, f *finder) error {
	for i := range fields {
		fields[i].Start, fields[i].End = -1, -1
	}
	if strict {
		return lookupValid(b, fields, f)
	}
	s := scanner{b: b}
	s.ws()
	if !s.consume('{') {
		return s.err("want a JSON object")
	}
	s.ws()
	found := 0
	if !s.consume('}') {
		for {
			keyAt := s.i
			k, err := s.key()
			if err != nil {
				return err
			}
			j, ok := keyIndex(k, fields)
			if !ok {
				return &SyntaxError{Offset: keyAt, Msg: "invalid escape in key"}
			}
			valueAt := s.i
			if err := s.skipTopValue(); err != nil {
				return err
			}
			if j >= 0 {
				if err := setField(fields, j, keyAt, valueAt, s.i); err != nil {
					return err
				}
				found++
				if !all && found == len(fields) {
					return nil
				}
			}
			s.ws()
			if s.consume('}') {
				break
			}
			if !s.consume(',') {
				return s.err("want ',' or '}'")
			}
			s.ws()
		}
	}
	s.ws()
	if s.i < len(b) {
		return s.err("unexpected data after the object")
	}
	return nil
}

// setField notes that fields[j], whose key starts at keyAt, has the value
// b[start:end], unless a member before had its key.
func setField(fields []Field, j, keyAt, start, end int) error {
	f := &fields[j]
	if f.Start >= 0 {
		return &SyntaxError{Offset: keyAt, Msg: fmt.Sprintf("duplicate key %q", f.Key)}
	}
	f.Start, f.End = start, end
	return nil
}

// lookupValid is lookup for LookupValid: object checks the document, and
// its values with f, and a key without an escape is compared with the
// fields as it is, when one of them has its length: a request has few
// members, but a scanner's steps and a search for a backslash in each key
// cost as much as the check of their values.
func lookupValid(b []byte, fields []Field, f *finder) error {
	var lens uint64 // most keys are no field's: not compared
	for i := range fields {
		lens |= KeyLengths(fields[i].Key)
	}
	var err error
	end, why, at := object(b, 1, f, lens, func(k []byte, v int, plain bool) int {
		j, ok := -1, true
		if plain {
			j = plainIndex(k, fields)
		} else {
			j, ok = keyIndex(k, fields)
		}
		keyAt := cap(b) - cap(k) - 1 // its quote
		if !ok {
			err = &SyntaxError{Offset: keyAt, Msg: "invalid escape in key"}
			return errSyntax
		}
		if j < 0 {
			return 0 // object checks the value
		}
		end := topValue(b, v, f, maxDepth-1) // the object is one level of the limit
		if end >= 0 {
			err = setField(fields, j, keyAt, v, end)
		}
		if err != nil {
			return errSyntax
		}
		return end
	})
	switch {
	case err != nil:
		return err
	case why != noFault:
		return faultError(b, why, at)
	}
	return endAt(b, end-1)
}

// faults are the messages of object's faults.
var faults = [...]string{
	notObject: "want a JSON object",
	noKey:     "want an object key",
	badKey:    "invalid string",
	noColon:   "want ':' after object key",
	badValue:  "invalid value",
	noComma:   "want ',' or '}'",
}

// topValue checks the value at b[i], a member or element of a container,
// which may nest limit levels deep, and returns the offset just past it,
// or below 0. A string or a number (half a request's members) is checked
// here, not by validValue, whose setup and end cost more than such a
// value; the container's reader checks what follows it.
func topValue(b []byte, i int, f *finder, limit int) int {
	if i < len(b) {
		switch c := b[i]; {
		case c == '"':
			if f != nil && f.mark != 0 && i+9 <= len(b) && word(b, i+1) == f.mark {
				f.marked = true
			}
			end, _ := stringEnd(b, i+1)
			return end
		case c-'1' <= 8:
			if end := shortInteger(b, i); end > 0 {
				return end
			}
			return validNumber(b, i)
		case c == '0':
			// 0 is the integer part: what follows it ends the number
			// unless it goes on (a fraction, an exponent).
			if i+1 < len(b) && b[i+1] != '.' && b[i+1]|0x20 != 'e' {
				return i + 1
			}
			return validNumber(b, i)
		case c == '-':
			return validNumber(b, i)
		}
	}
	end := validValue(b, i, f, nil, limit)
	if end == errDeep {
		end = validDeep(b, i, f, limit)
	}
	return end
}

// endAt checks that nothing but whitespace follows the top-level object's
// closing brace at b[i].
func endAt(b []byte, i int) error {
	if i = SkipSpace(b, i+1); i < len(b) {
		return errAt(b, i, "unexpected data after the object")
	}
	return nil
}

// plainIndex is keyIndex for a key without escapes.
func plainIndex(k []byte, fields []Field) int {
	for i := range fields {
		if string(k) == fields[i].Key {
			return i
		}
	}
	return -1
}

// scanner is a cursor over a JSON document. Its methods leave s.i where they stopped.
type scanner struct {
	b []byte
	i int
	// arrays has bit d set when the container at depth d of the value being skipped is an
	// array; a fixed bit set tracks nesting without allocating.
	arrays [(maxDepth + 63) / 64]uint64
}

// err reports msg at s.i, or the end of the input if s.i is there.
func (s *scanner) err(msg string) error { return errAt(s.b, s.i, msg) }

// errAt reports msg at b[i], or the end of the input if i is there.
func errAt(b []byte, i int, msg string) error {
	if i >= len(b) {
		msg = "unexpected end of input"
	}
	return &SyntaxError{Offset: i, Msg: msg}
}

// peek returns the byte at s.i, or 0 at the end of the input.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// consume moves past c if it is next.
func (s *scanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// ws moves past JSON whitespace.
func (s *scanner) ws() {
	for s.i < len(s.b) && IsSpace(s.b[s.i]) {
		s.i++
	}
}

// IsSpace reports whether c is JSON whitespace. A byte above a space, what
// most calls see, is told by one comparison.
func IsSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\r')
}

// SkipSpace returns the offset of the first byte at or after b[i] that is
// not JSON whitespace, or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// key moves past an object key, its colon and the whitespace around them, and returns the key's
// raw contents (still escaped, without quotes).
func (s *scanner) key() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.err("want an object key")
	}
	start := s.i
	if err := s.skipString(); err != nil {
		return nil, err
	}
	k := s.b[start+1 : s.i-1]
	s.ws()
	if !s.consume(':') {
		return nil, s.err("want ':' after object key")
	}
	s.ws()
	return k, nil
}

// skipString moves past the string at s.i. It jumps from quote to quote with bytes.IndexByte,
// which is vectorized, rather than looking at each byte, because strings can hold megabytes of
// base64. (bytes.IndexAny with more than one byte is a plain loop, so backslashes are not searched
// for; escaped quotes are recognized by counting the backslashes before each quote instead.)
func (s *scanner) skipString() error {
	start := s.i
	for i := start + 1; ; {
		q := bytes.IndexByte(s.b[i:], '"')
		if q < 0 {
			return &SyntaxError{Offset: start, Msg: "unterminated string"}
		}
		i += q + 1
		// The quote at i-1 is escaped iff an odd number of backslashes precede it; the opening
		// quote ends the count at the latest.
		n := 0
		for s.b[i-2-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			s.i = i
			return nil
		}
	}
}

// skipTopValue moves past a value of the top-level object. Containers go to
// sonic's native skipper, which is several times faster on dense documents
// (the messages array of a chat request); what it rejects is skipped again
// by skipValue, which names the problem.
func (s *scanner) skipTopValue() error {
	if c := s.peek(); c == '{' || c == '[' {
		if start, end := decoder.Skip(s.b[s.i:]); start == 0 && end > 0 {
			s.i += end
			return nil
		}
	}
	return s.skipValue()
}

// skipValue moves past the value at s.i, checking the structure of nested containers. It keeps
// its own stack rather than recursing, so hostile nesting cannot grow the goroutine stack.
func (s *scanner) skipValue() error {
	depth := 0 // containers opened by this value and not yet closed
	for {
		// s.i is at the start of a value.
		var err error
		switch c := s.peek(); {
		case c == '{' || c == '[':
			if depth == maxDepth-1 { // the top-level object is one more level
				return s.err("nesting too deep")
			}
			s.setArray(depth, c == '[')
			depth++
			s.i++
			s.ws()
			if s.consume(c + 2) { // '{'+2 is '}' and '['+2 is ']'
				depth--
				break // an empty container is a complete value
			}
			if c == '{' {
				if _, err := s.key(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			err = s.skipString()
		case c == 't':
			err = s.literal("true")
		case c == 'f':
			err = s.literal("false")
		case c == 'n':
			err = s.literal("null")
		case c == '-' || '0' <= c && c <= '9':
			err = s.number()
		default:
			return s.err("want a value")
		}
		if err != nil {
			return err
		}
		// A value is complete: close the containers it completes, then start the next element.
		for depth > 0 {
			s.ws()
			array := s.isArray(depth - 1)
			if s.consume(',') {
				s.ws()
				if !array {
					if _, err := s.key(); err != nil {
						return err
					}
				}
				break
			}
			closing := byte('}')
			if array {
				closing = ']'
			}
			if !s.consume(closing) {
				return s.err("want ',' or '" + string(closing) + "'")
			}
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

func (s *scanner) setArray(depth int, array bool) {
	bit := uint64(1) << (depth % 64)
	if array {
		s.arrays[depth/64] |= bit
	} else {
		s.arrays[depth/64] &^= bit
	}
}

func (s *scanner) isArray(depth int) bool { return s.arrays[depth/64]>>(depth%64)&1 == 1 }

// literal moves past lit, one of true, false and null.
func (s *scanner) literal(lit string) error {
	if end := s.i + len(lit); end > len(s.b) || string(s.b[s.i:end]) != lit {
		return s.err("invalid literal")
	}
	s.i += len(lit)
	return nil
}

// number moves past a number, following the JSON grammar: numbers are short, so checking them
// is cheap.
func (s *scanner) number() error {
	s.consume('-')
	if !s.consume('0') && s.digits() == 0 {
		return s.err("want a digit")
	}
	if s.consume('.') && s.digits() == 0 {
		return s.err("want a digit")
	}
	if s.consume('e') || s.consume('E') {
		if !s.consume('+') {
			s.consume('-')
		}
		if s.digits() == 0 {
			return s.err("want a digit")
		}
	}
	return nil
}

// digits moves past decimal digits and returns how many there were.
func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// keyIndex returns the index of the field whose Key the raw key contents k unescape to, or -1,
// and false if k holds an invalid escape.
func keyIndex(k []byte, fields []Field) (int, bool) {
	if bytes.IndexByte(k, '\\') < 0 {
		return plainIndex(k, fields), true
	}
	// Escaped keys are rare: check the escapes once, then compare with each field.
	for e := k; ; {
		j := bytes.IndexByte(e, '\\')
		if j < 0 {
			break
		}
		_, n := decodeEscape(e[j:])
		if n == 0 {
			return -1, false
		}
		e = e[j+n:]
	}
	for i := range fields {
		if unescapedEqual(k, fields[i].Key) {
			return i, true
		}
	}
	return -1, true
}

// unescapedEqual reports whether the raw key contents k, whose escapes are valid, unescape to
// key. It decodes one escape at a time, so keys of any length are compared without a buffer.
func unescapedEqual(k []byte, key string) bool {
	for {
		j := bytes.IndexByte(k, '\\')
		if j < 0 {
			return string(k) == key
		}
		if len(key) < j || string(k[:j]) != key[:j] {
			return false
		}
		r, n := decodeEscape(k[j:])
		var buf [utf8.UTFMax]byte
		w := utf8.EncodeRune(buf[:], r)
		if len(key) < j+w || string(buf[:w]) != key[j:j+w] {
			return false
		}
		k, key = k[j+n:], key[j+w:]
	}
}
