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

// Repeats reports whether the checked JSON object at the start of b, or
// an object nested in it through objects, names a key twice (keys
// decoded): readers then differ, a JSON parser that takes the last of a
// repeated key (encoding/json, Python's json, JavaScript's JSON.parse)
// from one that takes the first (the Go SDKs of OpenAI and Anthropic).
// It is false for a value that is no object.
func Repeats(b []byte) bool {
	type key struct {
		k     []byte
		plain bool // without escapes: compared as spelled
	}
	var seen [16]key
	keys := seen[:0]
	m := Members(b)
	for m.NextKey() && m.PassValue() {
		k := m.Key()
		plain := bytes.IndexByte(k, '\\') < 0
		for _, s := range keys {
			if s.plain && plain && string(s.k) == string(k) || !(s.plain && plain) && sameKey(s.k, k) {
				return true
			}
		}
		keys = append(keys, key{k, plain})
		if v := m.Value(); KindOf(v) == KindObject && Repeats(v) {
			return true
		}
	}
	return false
}

// AppendLast appends the checked JSON value b with the members of its
// objects (and of the objects nested in them through objects) reduced to
// the last of each key, keys decoded: what a parser that takes the last
// of a repeated key reads, spelled so that one that takes the first reads
// the same. A value with no object to reduce is appended as it is.
func AppendLast(dst, b []byte) []byte {
	if KindOf(b) != KindObject {
		return append(dst, b...)
	}
	type member struct{ key, value []byte }
	var buf [16]member
	ms := buf[:0]
	for m := Members(b); m.NextKey() && m.PassValue(); {
		ms = append(ms, member{m.Key(), m.Value()})
	}
	dst = append(dst, '{')
	first := true
members:
	for i, m := range ms {
		for _, n := range ms[i+1:] {
			if sameKey(n.key, m.key) {
				continue members // not the last of its key
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(append(append(dst, '"'), m.key...), '"', ':')
		dst = AppendLast(dst, m.value)
	}
	return append(dst, '}')
}

// sameKey reports whether the keys a and b, as spelled between their
// quotes in checked JSON, decode alike.
func sameKey(a, b []byte) bool {
	pa, pb := bytes.IndexByte(a, '\\') < 0, bytes.IndexByte(b, '\\') < 0
	switch {
	case pa && pb:
		return string(a) == string(b)
	case pa:
		return KeyIs(b, false, string(a))
	case pb:
		return KeyIs(a, false, string(b))
	}
	var q [64]byte
	da, err := AppendUnquote(q[:0], append(append(append(make([]byte, 0, len(a)+2), '"'), a...), '"'))
	return err == nil && KeyIs(b, false, string(da))
}

// AllKeys is the lens of Object that visits every key.
const AllKeys = ^uint64(0)

// KeySet tells a key named twice among an object's members as Object
// visits them (with AllKeys), where Repeats would walk the object again
// for most: each key sets a bit of a hash of its length and two of its
// bytes, and only when a bit was set already (a key named twice, or
// another of the same hash) is the object compared key by key
// (KeySet.Repeats).
type KeySet struct {
	bits, twice uint64 // twice: the bits set again
}

// Add adds the key k, spelled without escapes (a key with escapes is
// the caller's to count as named twice).
func (s *KeySet) Add(k []byte) {
	h := uint(len(k))
	if h > 0 { // no two keys of a usage the styles send share a bit
		h += uint(k[0])*2 + uint(k[h*2/5])
	}
	bit := uint64(1) << (h & 63)
	s.twice |= s.bits & bit
	s.bits |= bit
}

// Repeats reports whether the checked object obj, whose keys were all
// added, names a key twice: Repeats(obj), paid only after a collision.
func (s *KeySet) Repeats(obj []byte) bool { return s.twice != 0 && Repeats(obj) }
