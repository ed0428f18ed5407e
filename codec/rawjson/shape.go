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
// each string. A document of another shape (a stream's role, finish or
// usage chunk) is checked from the kept document's split on when it begins
// as that one does up to there (a chat stream's id, model and other members
// before "choices"), else whole; it is kept in its turn when it has a
// string to vary.
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
	// split is just past the comma before the first top-level member
	// that a key with its top bit names (0: none): doc[:split] is a
	// valid object's start up to a member.
	split int
	kept  uint32 // numbers the documents kept (Matched)
	same  bool   // the last document was the kept one but for its strings
}

// shapeMax bounds the documents kept, so that a stream's big event does not
// make its Shape hold that much from then on: text deltas are a few hundred
// bytes.
const shapeMax = 1024

// shapeKeys is how many keys Shape.ValidKeys finds.
const shapeKeys = 6

// Reset forgets the document kept (not the buffer).
func (s *Shape) Reset() { s.doc, s.split = s.doc[:0], 0 }

// ValidKeys is ValidKeysScoped(b, keys, at, top) for a stream of documents
// whose strings that vary are the value of the first member named keys[0]
// (found as ValidKeysScoped finds it) and the last top-level member's.
// keys must not be more than shapeKeys, and be the same from call to call.
// It never allocates once its buffer has grown.
func (s *Shape) ValidKeys(b []byte, keys []string, at []int, top uint64) bool {
	shift, ok := s.match(b)
	if s.same = ok; ok {
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
	valid, checked := s.validFromSplit(b, keys, at, top)
	if !checked {
		valid = ValidKeysScoped(b, keys, at, top)
	}
	if !valid {
		return false
	}
	if v := at[0]; v >= 0 && b[v] == '"' && len(b) <= shapeMax {
		s.keep(b, keys, at, top)
	} // else nothing to vary, or too big to keep: the kept document stays
	return true
}

// Matched reports whether the last ValidKeys call found its document to be
// the kept one with other contents in its varying strings: its keys are
// then the kept document's, spelled as there. kept numbers the kept
// document (it changes each time one is kept; 0 before the first), so
// that a caller can remember what it read of one: the call that kept a
// document is the one after which kept changed.
func (s *Shape) Matched() (kept uint32, ok bool) { return s.kept, s.same }

// keep keeps the valid document b, whose keys are at at, and its
// varying strings, the first of which starts at at[0].
func (s *Shape) keep(b []byte, keys []string, at []int, top uint64) {
	s.cs, s.ce = at[0]+1, validValue(b, at[0], nil, nil, 0)-1
	if s.ls, s.le = lastString(b); s.ls <= s.ce {
		s.ls, s.le = 0, 0 // none, or the first string itself
	}
	s.doc = append(s.doc[:0], b...)
	s.kept++
	copy(s.at[:], at[:len(keys)])
	s.split = 0
	for k, key := range keys {
		if v := at[k]; top>>k&1 == 1 && v >= 0 && (s.split == 0 || v < s.split) {
			if q := commaBefore(b, v, key); q > 0 {
				s.split = q
			}
		}
	}
}

// commaBefore returns the offset just past the comma before the member of
// the valid object b whose key is key and whose value starts at v, or 0
// when no comma comes before it.
func commaBefore(b []byte, v int, key string) int {
	j := skipSpaceBack(b, v)
	if j == 0 || b[j-1] != ':' {
		return 0
	}
	j = skipSpaceBack(b, j-1) // just past the key's closing quote
	ks := j - len(key) - 2    // its opening quote
	if ks < 1 || b[ks] != '"' || string(b[ks+1:j-1]) != key {
		return 0
	}
	if j = skipSpaceBack(b, ks); j == 0 || b[j-1] != ',' {
		return 0
	}
	return j
}

// validFromSplit checks b when it begins as the kept document does up to
// its split and a member follows: b is then valid exactly when an object
// of the members that follow is ('{' and b[split:], put after the kept
// document in its buffer), and a key is where the kept document has it
// when it has it before the split, else where that object has it. checked
// is false when b does not begin so, or the buffer would outgrow shapeMax.
// (Without a member's key there, "{}" would pass for a trailing comma.)
func (s *Shape) validFromSplit(b []byte, keys []string, at []int, top uint64) (valid, checked bool) {
	q, n := s.split, len(s.doc)
	if q == 0 || len(b) <= q || n+1+len(b)-q > shapeMax || string(b[:q]) != string(s.doc[:q]) {
		return false, false
	}
	if k := SkipSpace(b, q); k == len(b) || b[k] != '"' {
		return false, false
	}
	buf := append(append(s.doc, '{'), b[q:]...)
	s.doc = buf[:n]
	if !ValidKeysScoped(buf[n:], keys, at, top) {
		return false, true
	}
	for k := range keys {
		switch {
		case s.at[k] >= 0 && s.at[k] < q:
			at[k] = s.at[k]
		case at[k] >= 0:
			at[k] += q - 1
		}
	}
	return true, true
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
// contents start at b[i], or below 0 (see stringEnd).
func closingQuote(b []byte, i int) int {
	end, _ := stringEnd(b, i)
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
