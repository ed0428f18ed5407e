package responses

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/param"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Reading a request body into the wire structs (types.go) in one pass:
// each member is checked as it is read or passed over (rawjson's
// MemberReader and ElementReader), strings are unquoted where they are,
// and what sonic's struct decoding, which this replaces, accepted is
// accepted, and nothing else:
//
//   - keys match as spelled, after their escapes are decoded;
//   - null leaves a member as it was; a repeated member is read again (an
//     object's members merge, an array's elements are read again in place);
//   - strings are checked (no control characters, valid escapes); raw
//     values are spans of the body; invalid UTF-8 in either becomes U+FFFD
//     (in a copy), as sonic made it;
//   - a member of the wrong JSON type is a 400 naming it (within input's
//     items, once the input is read, as before); JSON that does not parse
//     is the body's 400, whatever else is wrong;
//   - values nest at most 4096 levels deep (sonic's limit).
//
// Content arrays, a reasoning item's content and tool_choice are spans,
// read when their item is (the body is checked by then).

// topDepth is the depth MembersAt is given for the request object so that
// its values may nest 4096 levels, as sonic let them (rawjson allows
// encoding/json's 10000 levels in all). The input's items are its
// elements, a depth below it; the content arrays of items, read on their
// own, are at contentDepth. A depth argument below is the depth of the
// value at hand.
const (
	topDepth     = 10000 - 4096
	contentDepth = topDepth + 3
)

// mismatch is a member of the wrong JSON type, if found: its name and
// what it must be.
type mismatch struct {
	found      bool
	name, want string
}

// set records the mismatch of the member key of the object named prefix
// ("": the object at hand; key "": the object itself) unless one is
// recorded already; the name is made only then.
func (m *mismatch) set(prefix, key, want string) {
	if m.found {
		return
	}
	switch {
	case key == "":
		key = prefix
	case prefix != "":
		key = prefix + "." + key
	}
	*m = mismatch{true, key, want}
}

func (m *mismatch) err() *codec.Error {
	return param.Invalid(m.name, "Invalid type for '"+m.name+"': expected "+m.want+".")
}

// read reads body, a Responses request, into w (emptied by Reset).
func (w *wireRequest) read(body []byte) *codec.Error {
	if bytes.Equal(trimSpace(body), []byte("null")) {
		return nil // sonic's reading of null: nothing set
	}
	end := readObject(body, w, topDepth, "", &w.bad)
	if end < 0 || rawjson.SkipSpace(body, end) != len(body) {
		return param.BodyError(body)
	}
	if w.bad.found {
		return w.bad.err()
	}
	return nil
}

// fields is a wire struct that readMembers fills. Its methods are given
// no reader: a reader passed to a dynamic call would go to the heap.
type fields interface {
	// member returns where the member named key goes; the zero target
	// for a member not read.
	member(key string) target
}

// target is where a member goes: one of a string, a raw value, a wire
// struct (an object, named name), a list of them or of strings (an
// array, named name), or the request's input.
type target struct {
	s     *string
	raw   *rawValue
	obj   fields
	list  objectList
	strs  *[]string
	input *wireRequest
	name  string
}

// objectList is a slice of wire structs that readObjects fills.
type objectList interface {
	// reset empties the slice, keeping its elements for reuse, as sonic
	// did: a null element is the element as it was.
	reset()
	// at returns element i, the slice grown to hold it.
	at(i int) fields
}

// grow makes *s hold element i (its length i+1), and returns it.
func grow[T any](s *[]T, i int) *T {
	if i < cap(*s) {
		*s = (*s)[:i+1]
	} else {
		var zero T
		*s = append(*s, zero)
	}
	return &(*s)[i]
}

// readMembers reads the members of the object o reads into f, its values
// nested depth deep; the first member of the wrong type goes to bad,
// named within prefix (see mismatch.set). A broken object is o's error.
func readMembers(o *rawjson.MemberReader, f fields, depth int, prefix string, bad *mismatch) {
	var buf [32]byte
	for o.NextKey() {
		key := keyOf(o.Key(), buf[:0])
		t := f.member(key)
		switch {
		case t.input != nil:
			t.input.readInput(o, depth)
		case t.obj != nil:
			if rest, ok := container(o, '{', t.name, "an object", bad); ok {
				closeAt(o, readObject(rest, t.obj, depth, t.name, bad))
			}
		case t.list != nil:
			if rest, ok := container(o, '[', t.name, "an array", bad); ok {
				closeAt(o, readObjects(rest, t.list, depth, t.name, bad))
			}
		case t.strs != nil:
			if rest, ok := container(o, '[', t.name, "an array", bad); ok {
				closeAt(o, readStrings(rest, t.strs, depth, t.name, bad))
			}
		case t.s != nil:
			if !readStringAt(o, t.s) {
				bad.set(prefix, key, "a string")
			}
		default:
			v, ok := rawAt(o)
			if !ok {
				return
			}
			if t.raw != nil {
				*t.raw = v
			}
		}
	}
}

// readStringAt reads the value at o into *s as readString does, a string
// checked and unquoted in one pass when it is plain.
func readStringAt(o *rawjson.MemberReader, s *string) bool {
	rest := o.Rest()
	if len(rest) == 0 || rest[0] != '"' {
		return !o.SkipValue() || readString(o.Value(), s) // broken: o's error
	}
	end, plain := rawjson.CheckString(rest, 0)
	switch {
	case end < 0:
	case plain:
		*s = rawjson.UnsafeString(rest[1 : end-1])
	default:
		*s = unquote(rest[:end])
	}
	closeAt(o, end)
	return true
}

// keyOf is the key k as a string, without a copy unless it has escapes to
// decode (into buf's array, or a new one).
func keyOf(k, buf []byte) string {
	if bytes.IndexByte(k, '\\') < 0 {
		return rawjson.UnsafeString(k)
	}
	buf = append(buf, '"')
	buf = append(buf, k...)
	u, _ := rawjson.AppendUnquote(nil, append(buf, '"')) // checked by NextKey
	return string(u)
}

// readString reads v, a checked value, into *s as sonic read a string:
// null leaves *s as it is; false when v is not a string.
func readString(v []byte, s *string) bool {
	switch rawjson.KindOf(v) {
	case rawjson.KindString:
		*s = unquote(v)
		return true
	case rawjson.KindNull:
		return true
	}
	return false
}

// rawAt passes over the value at o, and returns it as a raw value (see
// validUTF8); ok is false when it is broken (o's error). A string is
// checked by CheckString, which also says whether it is ASCII.
func rawAt(o *rawjson.MemberReader) (v []byte, ok bool) {
	rest := o.Rest()
	if len(rest) == 0 || rest[0] != '"' {
		if !o.SkipValue() {
			return nil, false
		}
		return validUTF8(o.Value()), true
	}
	end, plain := rawjson.CheckString(rest, 0)
	if closeAt(o, end); end < 0 {
		return nil, false
	}
	if v = rest[:end]; !plain {
		v = validUTF8(v)
	}
	return v, true
}

// validUTF8 is the raw value v, or a copy with each byte of invalid UTF-8
// replaced by U+FFFD when it has any, as sonic gave raw values.
func validUTF8(v []byte) []byte {
	if utf8.Valid(v) { // ASCII is taken a word at a time
		return v
	}
	return rawjson.AppendUTF8(nil, v)
}

// unquote is the contents of the checked JSON string v: a view of it when
// it has no escapes and is valid UTF-8, else decoded, with invalid UTF-8
// replaced by U+FFFD.
func unquote(v []byte) string {
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return rawjson.UnsafeString(s)
	}
	u, _ := rawjson.AppendUnquote(make([]byte, 0, len(v)), v)
	return rawjson.UnsafeString(u)
}

// container returns the value at o when it opens with c (an object or an
// array, what the member named name must be), from there on; else it
// passes the value over, a mismatch unless null.
func container(o *rawjson.MemberReader, c byte, name, want string, bad *mismatch) (rest []byte, ok bool) {
	if rest = o.Rest(); len(rest) > 0 && rest[0] == c {
		return rest, true
	}
	if o.SkipValue() && rawjson.KindOf(o.Value()) != rawjson.KindNull {
		bad.set("", name, want)
	}
	return nil, false
}

// closeAt moves o past its value, a container the caller read, which
// ended at end within it (-1: broken).
func closeAt(o *rawjson.MemberReader, end int) {
	if end >= 0 {
		end += o.ValueStart()
	}
	o.EndValue(end)
}

// readObject reads the object at the start of b, nested depth deep and
// named name, into f, and returns the offset just past it (-1: broken).
func readObject(b []byte, f fields, depth int, name string, bad *mismatch) int {
	o := rawjson.MembersAt(b, depth)
	readMembers(&o, f, depth+1, name, bad)
	return o.End()
}

// readObjects reads the array of objects at the start of b, nested depth
// deep and named name, into l, and returns the offset just past it (-1:
// broken).
func readObjects(b []byte, l objectList, depth int, name string, bad *mismatch) int {
	a := rawjson.ElementsAt(b, depth)
	l.reset()
	for i := 0; a.NextValue(); i++ {
		f := l.at(i)
		rest := a.Rest()
		found := bad.found
		switch {
		case len(rest) > 0 && rest[0] == '{':
			end := readObject(rest, f, depth+1, "", bad)
			if end >= 0 {
				end += a.ValueStart()
			}
			a.EndValue(end)
		case a.SkipValue() && rawjson.KindOf(a.Value()) != rawjson.KindNull:
			bad.set("", "", "an object")
		}
		if bad.found && !found { // named within the element
			bad.found = false
			bad.set(name+"["+strconv.Itoa(i)+"]", bad.name, bad.want)
		}
	}
	return a.End()
}

// readStrings reads the array of strings at the start of b, nested depth
// deep and named name, into *s (emptied and null elements kept, as
// readObjects), and returns the offset just past it (-1: broken).
func readStrings(b []byte, s *[]string, depth int, name string, bad *mismatch) int {
	a := rawjson.ElementsAt(b, depth)
	*s = (*s)[:0]
	for i := 0; a.Next(); i++ {
		if !readString(a.Value(), grow(s, i)) {
			bad.set("", name+"["+strconv.Itoa(i)+"]", "a string")
		}
	}
	return a.End()
}
