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
func Members(b []byte) MemberReader {
	m := MemberReader{b: b, i: SkipSpace(b, 0), open: true}
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
}

// Next moves to the next member and reports whether there is one.
func (m *MemberReader) Next() bool {
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
	ke := validValue(b, i, nil, nil, 1)
	if ke < 0 {
		return m.fail()
	}
	m.ks, m.ke = i+1, ke-1
	if i = SkipSpace(b, ke); i >= len(b) || b[i] != ':' {
		return m.fail()
	}
	m.vs = SkipSpace(b, i+1)
	if m.ve = validValue(b, m.vs, nil, nil, maxDepth-1); m.ve == errDeep {
		m.ve = validDeep(b, m.vs, nil, maxDepth-1)
	}
	if m.ve < 0 {
		return m.fail()
	}
	m.i = SkipSpace(b, m.ve) // the next call checks what is there
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
