package rawjson

import "bytes"

// Last is a key LastKeys looks for among an object's members, and what it
// found.
type Last struct {
	Key string
	// At is the offset of the value of the last member whose key decodes
	// to Key, the one a JSON parser reads (encoding/json, Python's json,
	// JavaScript's JSON.parse); -1 when there is none.
	At int
	// Again is set when more than one member is so named, or one is
	// spelled with escapes: a reader that takes the first of them, or
	// compares keys as spelled, reads another value.
	Again bool
}

// LastKeys reads the members of the object at b[i], a document checked
// already (Valid), and fills in keys; it returns the offset just past the
// object, or -1 when there is no object there. It decodes only the keys
// with escapes and never allocates.
func LastKeys(b []byte, i int, keys []Last) int {
	for k := range keys {
		keys[k].At, keys[k].Again = -1, false
	}
	m := Members(b[i:])
	for m.NextKey() && m.PassValue() {
		key := m.Key()
		plain := bytes.IndexByte(key, '\\') < 0
		for k := range keys {
			if l := &keys[k]; KeyIs(key, plain, l.Key) {
				l.Again = l.Again || l.At >= 0 || !plain
				l.At = i + m.ValueStart()
			}
		}
	}
	if m.End() < 0 {
		return -1
	}
	return i + m.End()
}
