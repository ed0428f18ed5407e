package rawjson

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
	i      int // the separator or closing before the next value (checked by next); -1 once done
	vs, ve int // the current value
	end    int // just past the container, or where it broke
	err    bool
	sep    byte // what precedes the next value: the opening, then ','
	limit  int  // the nesting a value may have
}

func newCursor(b []byte, opening byte, depth int) cursor {
	c := cursor{b: b, i: SkipSpace(b, 0), sep: opening, limit: maxDepth - depth}
	if c.i >= len(b) || b[c.i] != opening {
		c.fail()
	}
	return c
}

// next checks the separator at c.i (the opening, then a ',') and the
// whitespace after it, and returns the offset of what follows, the next
// member or element, or -1 at the container's end or a fault.
func (c *cursor) next(closing byte) int {
	b, i := c.b, c.i
	if uint(i) >= uint(len(b)) || b[i] != c.sep {
		c.stop(closing)
		return -1
	}
	if i++; i < len(b) && b[i] <= ' ' {
		i = SkipSpace(b, i)
	}
	if c.sep != ',' { // the opening: the container may be empty
		if c.sep = ','; i < len(b) && b[i] == closing {
			c.done(i + 1)
			return -1
		}
	}
	return i
}

// stop is next where c.i is not at a separator: the container's end after
// a value, or a fault (or the reader is done already).
func (c *cursor) stop(closing byte) {
	switch {
	case c.i < 0:
	case c.i < len(c.b) && c.b[c.i] == closing && c.sep == ',':
		c.done(c.i + 1)
	default:
		c.fail()
	}
}

// Next moves to the next member and reports whether there is one.
func (m *MemberReader) Next() bool { return m.NextKey() && m.SkipValue() }

// NextKey is the first half of Next: it moves to the next member's key,
// and leaves its value unchecked at ValueStart, for the caller to read
// with SkipValue (the other half of Next) or by itself, checking it as
// Valid does, then to report where it ended with EndValue. A usage object
// so read is read and checked in one pass.
func (m *MemberReader) NextKey() bool {
	i := m.next('}')
	if i < 0 {
		return false
	}
	b := m.b
	if i >= len(b) || b[i] != '"' {
		return m.fail()
	}
	ke, _ := stringEnd(b, i+1)
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
func (c *cursor) SkipValue() bool { return c.EndValue(topValue(c.b, c.vs, nil, c.limit)) }

// PassValue moves past the value NextKey (or NextValue) left without
// checking it, for a document checked already: a string is passed over
// from quote to quote, a container by its brackets. It is false, the
// reader done with an error, when the value does not end.
func (c *cursor) PassValue() bool { return c.EndValue(ValueEnd(c.b, c.vs)) }

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
