package rawjson

import "math/bits"

// Members reads the members of the JSON object at the start of b, one at a
// time, checking each value as Valid does; what follows the object is not
// looked at. It is for small objects read whole (a usage object), where
// Lookup's fixed cost, and sonic's under it, is most of the work:
//
//	m := rawjson.Members(b)
//	for m.Next() {
//		switch string(m.Key()) { ... m.Value() ... }
//	}
//	if err := m.Err(); err != nil { ... }
//
// Keys are compared as they are spelled, escapes not decoded. It never
// allocates but for the error it reports.
func Members(b []byte) MemberReader { return MembersAt(b, 1) }

// MembersAt is Members for an object nested depth levels deep in its
// document (the top-level object is at 1): its values are held to what
// is left of encoding/json's nesting limit.
func MembersAt(b []byte, depth int) MemberReader {
	return MemberReader{cursor: newCursor(b, '{', depth)}
}

// MemberReader is the cursor Members returns.
type MemberReader struct {
	cursor
	ks, ke int // the current key, without its quotes
}

// cursor is what MemberReader and ElementReader share: where they are in
// the container, and the value they left.
type cursor struct {
	b      []byte
	i      int // the opening, ',' or closing before the next value (checked by next); -1 once done
	vs, ve int // the current value
	end    int // just past the container, or where it broke
	err    bool
	open   bool // c.i is at the container's opening: nothing read yet
	limit  int  // the nesting a value may have
}

func newCursor(b []byte, opening byte, depth int) cursor {
	c := cursor{b: b, i: SkipSpace(b, 0), open: true, limit: maxDepth - depth}
	if c.i >= len(b) || b[c.i] != opening {
		c.fail()
	}
	return c
}

// next checks the separator at c.i of the container that opening and
// closing delimit and returns the offset of what follows it, the next
// member or element; ok is false at the container's end or a fault.
func (c *cursor) next(opening, closing byte) (i int, ok bool) {
	if c.i < 0 {
		return 0, false
	}
	b := c.b
	if c.i >= len(b) {
		return 0, c.fail()
	}
	switch d := b[c.i]; {
	case d == closing && !c.open:
		return 0, c.done(c.i + 1)
	case d != opening && d != ',', (d == opening) != c.open:
		return 0, c.fail() // an opening only opens, a ',' only follows a value
	}
	i = SkipSpace(b, c.i+1)
	if c.open && i < len(b) && b[i] == closing {
		return 0, c.done(i + 1)
	}
	c.open = false
	return i, true
}

// Next moves to the next member and reports whether there is one.
func (m *MemberReader) Next() bool { return m.NextKey() && m.SkipValue() }

// NextKey is the first half of Next: it moves to the next member's key,
// and leaves its value unchecked at ValueStart, for the caller to read
// with SkipValue (the other half of Next) or by itself, checking it as
// Valid does, then to report where it ended with EndValue. A usage object
// so read is read and checked in one pass.
func (m *MemberReader) NextKey() bool {
	b, i := m.b, -1
	sep := byte(',') // what precedes a member: ',', or the opening brace
	if m.open {
		sep = '{'
	}
	if j := m.i; j >= 0 && j < len(b) && b[j] == sep {
		// The separator and the key's quote, whitespace between or not,
		// without next's cases (the end, a broken object).
		if j++; j < len(b) && b[j] <= ' ' {
			j = SkipSpace(b, j)
		}
		if j < len(b) && b[j] == '"' {
			i, m.open = j, false
		}
	}
	if i < 0 {
		var ok bool
		if i, ok = m.next('{', '}'); !ok {
			return false
		}
		if i >= len(b) || b[i] != '"' {
			return m.fail()
		}
	}
	ke := plainStringEnd(b, i)
	if ke < 0 {
		return m.fail()
	}
	m.ks, m.ke = i+1, ke-1
	if i = SkipSpace(b, ke); i >= len(b) || b[i] != ':' {
		return m.fail()
	}
	m.vs = SkipSpace(b, i+1)
	return true
}

// ValueStart is the offset in b of the value NextKey (or NextValue) left.
func (c *cursor) ValueStart() int { return c.vs }

// Rest is b from the value NextKey (or NextValue) left on, for a caller
// that reads the value itself and reports its end with EndValue.
func (c *cursor) Rest() []byte { return c.b[c.vs:] }

// SkipValue checks the value NextKey (or NextValue) left and moves past
// it; false when it is not JSON (then the reader is done, with an error).
func (c *cursor) SkipValue() bool {
	if c.vs < len(c.b) {
		switch v := c.b[c.vs]; {
		case '0' <= v && v <= '9':
			// A count, read here when it is digits that a separator
			// follows (0 alone: a leading zero is no number's).
			j := c.vs + 1
			if v != '0' {
				for j < len(c.b) && c.b[j]-'0' <= 9 {
					j++
				}
			}
			if j < len(c.b) && (c.b[j] == ',' || c.b[j] == '}' || c.b[j] == ']') {
				return c.EndValue(j)
			}
			return c.EndValue(validNumber(c.b, c.vs)) // no call to the whole check
		case v == '-':
			return c.EndValue(validNumber(c.b, c.vs))
		case v == '"':
			return c.EndValue(plainStringEnd(c.b, c.vs)) // an id, a name: nor for a string
		}
	}
	end := validValue(c.b, c.vs, nil, nil, c.limit)
	if end == errDeep {
		end = validDeep(c.b, c.vs, nil, c.limit)
	}
	return c.EndValue(end)
}

// PassValue moves past the value NextKey (or NextValue) left without
// checking it, for a document checked already: a string is passed over
// from quote to quote, a container by its brackets. It is false, the
// reader done with an error, when the value does not end.
func (c *cursor) PassValue() bool { return c.EndValue(ValueEnd(c.b, c.vs)) }

// plainStringEnd is validValue for the string at b[i] (a quote), a key or
// a short value: most are plain, so a word at a time, without the call and
// the setup of the whole check, until a backslash or a control character,
// or a length where the whole check's vectorized searches cost less (a
// text, base64), sends the string to it.
func plainStringEnd(b []byte, i int) int {
	end, _ := keyStringEnd(b, i)
	return end
}

// keyStringEnd is plainStringEnd that also reports a string read a word at
// a time to its closing quote: plain, it has no escape.
func keyStringEnd(b []byte, i int) (end int, plain bool) {
	j := i + 1
	for lim := min(len(b), j+72); j+8 <= lim; j += 8 {
		if m := special(word(b, j)); m != 0 {
			if j += bits.TrailingZeros64(m) >> 3; b[j] == '"' {
				return j + 1, true
			}
			return validValue(b, i, nil, nil, 0), false
		}
	}
	if j+8 <= len(b) {
		return validValue(b, i, nil, nil, 0), false // 72 bytes without a quote
	}
	for ; j < len(b); j++ {
		if c := b[j]; c == '"' {
			return j + 1, true
		} else if c == '\\' || c < 0x20 {
			return validValue(b, i, nil, nil, 0), false
		}
	}
	return errSyntax, false
}

// EndValue moves past the value NextKey (or NextValue) left, which the
// caller checked and found to end just before b[end]; an end below 0 says
// it is not JSON (then the reader is done, with an error, and EndValue is
// false).
func (c *cursor) EndValue(end int) bool {
	if end < 0 {
		return c.fail()
	}
	c.ve = end
	c.i = SkipSpace(c.b, end) // the next call checks what is there
	return true
}

// Key is the current member's key as spelled between its quotes.
func (m *MemberReader) Key() []byte { return m.b[m.ks:m.ke] }

// Value is the current value, checked.
func (c *cursor) Value() []byte { return c.b[c.vs:c.ve] }

// End is the offset just past the container once the reader has read to
// its end without an error, else -1.
func (c *cursor) End() int {
	if c.err || c.i >= 0 {
		return -1
	}
	return c.end
}

// Err reports a b that does not start with the container, or one that is
// broken.
func (c *cursor) Err() error {
	if c.err {
		return &SyntaxError{Offset: c.end, Msg: "invalid JSON"}
	}
	return nil
}

func (c *cursor) done(end int) bool {
	c.i, c.end = -1, end
	return false
}

func (c *cursor) fail() bool {
	c.err = true
	return c.done(max(c.i, 0))
}
