package rawjson

// Shape checks the documents of a stream most of which differ from the one
// before only in the contents of one string: the text deltas of a chat
// stream, whose id, model and other members repeat from chunk to chunk.
// It keeps the last document it checked whole; a document that starts and
// ends as that one does around the varying string is as valid as it when
// the bytes between are string contents (JSON's grammar does not look
// inside a string), so that only those bytes are checked, and what the
// whole check found is found again by moving the offsets past the string.
// A document of another shape is checked whole, and kept in its turn.
//
// The zero Shape is ready; it is for one stream at a time, and keeps its
// buffer (at most shapeMax bytes) from stream to stream: Reset it between
// streams.
type Shape struct {
	doc    []byte // the last document checked whole; empty: none kept
	cs, ce int    // the contents of its varying string, doc[cs:ce]
	at     [shapeKeys]int
}

// shapeMax bounds the documents kept, so that a stream's big event does not
// make its Shape hold that much from then on: text deltas are a few hundred
// bytes.
const shapeMax = 1024

// shapeKeys is how many keys Shape.ValidKeys finds.
const shapeKeys = 6

// Reset forgets the document kept (not the buffer).
func (s *Shape) Reset() { s.doc = s.doc[:0] }

// ValidKeys is ValidKeysScoped(b, keys, at, top) for a stream of documents
// whose string that varies is the value of the first member named keys[0]
// (found as ValidKeysScoped finds it). keys must not be more than
// shapeKeys, and be the same from call to call. It never allocates once
// its buffer has grown.
func (s *Shape) ValidKeys(b []byte, keys []string, at []int, top uint64) bool {
	if s.same(b) {
		shift := len(b) - len(s.doc)
		for k := range keys {
			if at[k] = s.at[k]; at[k] >= s.ce {
				at[k] += shift // past the string: the offset moves with its end
			}
		}
		return true
	}
	s.doc = s.doc[:0]
	if !ValidKeysScoped(b, keys, at, top) {
		return false
	}
	v := at[0]
	if v < 0 || b[v] != '"' || len(b) > shapeMax {
		return true // nothing to vary, or too big to keep
	}
	s.cs, s.ce = v+1, validValue(b, v, nil, nil, 0)-1
	s.doc = append(s.doc, b...)
	copy(s.at[:], at[:len(keys)])
	return true
}

// same reports whether b is the kept document with other contents in its
// varying string: the same bytes before and after it, and between them
// string contents that end where the kept string's closing quote does.
func (s *Shape) same(b []byte) bool {
	n := len(s.doc)
	if n == 0 {
		return false
	}
	end := len(b) - (n - s.ce) // where b's closing quote must be
	if end < s.cs || string(b[:s.cs]) != string(s.doc[:s.cs]) || string(b[end:]) != string(s.doc[s.ce:]) {
		return false
	}
	// The string from its opening quote: an unescaped quote or a bad byte
	// before end, or a backslash that escapes the quote at end, stops it
	// elsewhere.
	return validValue(b, s.cs-1, nil, nil, 0) == end+1
}
