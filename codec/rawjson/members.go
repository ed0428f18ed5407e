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
	m := MemberReader{b: b, i: SkipSpace(b, 0), open: true, limit: maxDepth - depth}
	if m.i >= len(b) || b[m.i] != '{' {
		m.fail()
	}
	return m
}

// MemberReader is the cursor Members returns.
type MemberReader struct {
	b      []byte
	i      int // the '{', ',' or '}' before the next member (checked by Next); -1 once done
	ks, ke int // the current key, without its quotes
	vs, ve int // the current value
	end    int // just past the object, or where it broke
	err    bool
	open   bool // m.i is at the object's '{': no member read yet
	limit  int  // the nesting a value may have
}

// Next moves to the next member and reports whether there is one.
func (m *MemberReader) Next() bool { return m.NextKey() && m.SkipValue() }

// NextKey is the first half of Next: it moves to the next member's key,
// and leaves its value unchecked at ValueStart, for the caller to read
// with SkipValue (the other half of Next) or by itself, checking it as
// Valid does, then to report where it ended with EndValue. A usage object
// so read is read and checked in one pass.
func (m *MemberReader) NextKey() bool {
	if m.i < 0 {
		return false
	}
	b := m.b
	if m.i >= len(b) {
		return m.fail()
	}
	switch d := b[m.i]; {
	case d == '}' && !m.open:
		return m.done(m.i + 1)
	case d != '{' && d != ',', (d == '{') != m.open:
		return m.fail() // a '{' only opens the object, a ',' only follows a member
	}
	i := SkipSpace(b, m.i+1)
	if m.open && i < len(b) && b[i] == '}' {
		return m.done(i + 1)
	}
	m.open = false
	if i >= len(b) || b[i] != '"' {
		return m.fail()
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

// ValueStart is the offset in b of the value NextKey left.
func (m *MemberReader) ValueStart() int { return m.vs }

// SkipValue checks the value NextKey left and moves past it; false when it
// is not JSON (then the reader is done, with an error).
func (m *MemberReader) SkipValue() bool {
	if m.vs < len(m.b) && ('0' <= m.b[m.vs] && m.b[m.vs] <= '9' || m.b[m.vs] == '-') {
		return m.EndValue(validNumber(m.b, m.vs)) // a count: no call to the whole check
	}
	end := validValue(m.b, m.vs, nil, nil, m.limit)
	if end == errDeep {
		end = validDeep(m.b, m.vs, nil, m.limit)
	}
	return m.EndValue(end)
}

// plainStringEnd is validValue for the string at b[i] (a quote), a key:
// keys are short and plain, so a byte at a time, without the call and the
// setup of the whole check, until a backslash or a control character
// sends the string to it.
func plainStringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		if c := b[j]; c == '"' {
			return j + 1
		} else if c == '\\' || c < 0x20 {
			return validValue(b, i, nil, nil, 0)
		}
	}
	return errSyntax
}

// EndValue moves past the value NextKey left, which the caller checked
// and found to end just before b[end]; an end below 0 says it is not JSON
// (then the reader is done, with an error, and EndValue is false).
func (m *MemberReader) EndValue(end int) bool {
	if end < 0 {
		return m.fail()
	}
	m.ve = end
	m.i = SkipSpace(m.b, end) // the next call checks what is there
	return true
}

// Key is the current member's key as spelled between its quotes.
func (m *MemberReader) Key() []byte { return m.b[m.ks:m.ke] }

// Value is the current member's value, checked.
func (m *MemberReader) Value() []byte { return m.b[m.vs:m.ve] }

// End is the offset just past the object once Next has read to its end
// without an error, else -1.
func (m *MemberReader) End() int {
	if m.err || m.i >= 0 {
		return -1
	}
	return m.end
}

// Err reports a b that is not a JSON object, or one that is broken.
func (m *MemberReader) Err() error {
	if m.err {
		return &SyntaxError{Offset: m.end, Msg: "invalid JSON object"}
	}
	return nil
}

func (m *MemberReader) done(end int) bool {
	m.i, m.end = -1, end
	return false
}

func (m *MemberReader) fail() bool {
	m.err = true
	return m.done(max(m.i, 0))
}
