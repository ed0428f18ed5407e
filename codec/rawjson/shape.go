package rawjson

// Shape checks the documents of a stream most of which differ from the one
// before only in the contents of two strings: the text deltas of a chat
// stream, whose id, model and other members repeat from chunk to chunk but
// for the text and, from api.openai.com, an obfuscation string of random
// length that ends each chunk. It keeps the last document it checked whole;
// a document that is that one with other contents in those strings is as
// valid as it when the new contents are string contents (JSON's grammar
// does not look inside a string), so that only those bytes are checked,
// and what the whole check found is found again by moving the offsets past
// each string. A document of another shape is checked whole, and kept in
// its turn.
//
// The strings that may vary are the value of the first member named keys[0]
// (the text) and the value of the top-level object's last member when it is
// a string after that one (the obfuscation).
//
// The zero Shape is ready; it is for one stream at a time, and keeps its
// buffer (at most shapeMax bytes) from stream to stream: Reset it between
// streams.
type Shape struct {
	doc    []byte // the last document checked whole; empty: none kept
	cs, ce int    // the contents of its first varying string, doc[cs:ce]
	ls, le int    // the contents of its last one, doc[ls:le]; ls == 0: none
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
// whose strings that vary are the value of the first member named keys[0]
// (found as ValidKeysScoped finds it) and the last top-level member's.
// keys must not be more than shapeKeys, and be the same from call to call.
// It never allocates once its buffer has grown.
func (s *Shape) ValidKeys(b []byte, keys []string, at []int, top uint64) bool {
	if shift, ok := s.match(b); ok {
		for k := range keys {
			switch at[k] = s.at[k]; {
			case s.ls > 0 && at[k] >= s.le:
				at[k] += len(b) - len(s.doc) // past both strings
			case at[k] >= s.ce:
				at[k] += shift // past the first string: the offset moves with its end
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
	if s.ls, s.le = lastString(b); s.ls <= s.ce {
		s.ls, s.le = 0, 0 // none, or the first string itself
	}
	s.doc = append(s.doc, b...)
	copy(s.at[:], at[:len(keys)])
	return true
}

// match reports whether b is the kept document with other contents in its
// varying strings, and how far b's bytes after the first string are from
// the kept document's. Each string of b is read from its opening quote to
// the first quote that ends it (an unescaped quote; a bad byte or escape
// ends no string), and the bytes around the strings must be the kept
// document's: then b is that document with other string contents.
func (s *Shape) match(b []byte) (shift int, ok bool) {
	if len(s.doc) == 0 || len(b) <= s.cs || string(b[:s.cs]) != string(s.doc[:s.cs]) {
		return 0, false
	}
	end := closingQuote(b, s.cs) // b's closing quote of the first string
	if end < 0 {
		return 0, false
	}
	shift = end - s.ce
	if s.ls == 0 {
		return shift, string(b[end:]) == string(s.doc[s.ce:])
	}
	ls := s.ls + shift // where b's last string's contents start
	if ls >= len(b) || string(b[end:ls]) != string(s.doc[s.ce:s.ls]) {
		return 0, false
	}
	le := closingQuote(b, ls)
	return shift, le >= 0 && string(b[le:]) == string(s.doc[s.le:])
}

// closingQuote is the offset of the closing quote of the string whose
// contents start at b[i], or below 0 (see checkedStringEnd).
func closingQuote(b []byte, i int) int {
	end, _ := checkedStringEnd(b, i)
	return end - 1
}

// lastString returns the span of the contents of the string that is the
// value of the last member of the valid object b, or 0, 0 when that value is
// no string. Read backwards, the string's opening quote is the first quote
// not escaped, one after an even run of backslashes: a quote inside valid
// string contents always follows an odd one.
func lastString(b []byte) (start, end int) {
	j := skipSpaceBack(b, len(b))
	if j == 0 || b[j-1] != '}' {
		return 0, 0
	}
	end = skipSpaceBack(b, j-1) - 1
	if end <= 0 || b[end] != '"' {
		return 0, 0
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] != '"' {
			continue
		}
		k := i
		for k > 0 && b[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1, end
		}
	}
	return 0, 0
}

// skipSpaceBack returns the index just past the last byte of b[:i] that is
// not JSON whitespace.
func skipSpaceBack(b []byte, i int) int {
	for i > 0 && (b[i-1] == ' ' || b[i-1] == '\t' || b[i-1] == '\n' || b[i-1] == '\r') {
		i--
	}
	return i
}
