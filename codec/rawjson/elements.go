package rawjson

// Elements reads the elements of the JSON array at the start of b, one at
// a time, as Members reads an object's members:
//
//	a := rawjson.Elements(b)
//	for a.Next() {
//		... a.Value() ...
//	}
//	if err := a.Err(); err != nil { ... }
//
// With NextValue and EndValue the caller reads and checks an element by
// itself (an object, with MembersAt), in the same pass.
func Elements(b []byte) ElementReader { return ElementsAt(b, 1) }

// ElementsAt is Elements for an array nested depth levels deep in its
// document (the top-level value is at 1).
func ElementsAt(b []byte, depth int) ElementReader {
	return ElementReader{cursor: newCursor(b, '[', depth)}
}

// ElementReader is the cursor Elements returns.
type ElementReader struct{ cursor }

// Next moves to the next element and reports whether there is one.
func (a *ElementReader) Next() bool { return a.NextValue() && a.SkipValue() }

// NextValue is the first half of Next: it moves to the next element and
// leaves it unchecked at ValueStart (see MemberReader.NextKey).
func (a *ElementReader) NextValue() bool {
	i := a.next(']')
	if i >= 0 {
		a.vs = i
	}
	return i >= 0
}
