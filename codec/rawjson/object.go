package rawjson

// Object checks the JSON object at the start of b (whitespace before it
// allowed), nested depth levels deep in its document (the top-level object
// is at 1), as Valid does, and returns the offset just past it, or -1 when
// it is not one; what follows it is not looked at. It calls visit for each
// member, with the key as spelled between its quotes (plain: without
// escapes) and the offset in b of its value: visit returns 0 to have
// Object check the value, or, when it read the value itself and checked it
// (CheckValue, a nested Object), the offset just past it, below 0 when it
// is not JSON.
//
// Only the keys whose length has its bit set in lens (KeyLengths) are
// visited, and the keys with escapes: a member that no key of the caller's
// can name costs no call.
//
// It is MemberReader for an object read whole in one pass (an answer and
// its usage): its state stays in registers from member to member, where a
// reader's goes through memory at each call, which cost as much as the
// check of most members' values. It never allocates.
func Object(b []byte, depth int, lens uint64, visit func(key []byte, v int, plain bool) int) int {
	end, _, _ := object(b, depth, nil, lens, visit)
	return end
}

// ObjectError is Object for a caller that reports why b is not an object:
// err is then a *SyntaxError at the offset where it broke (the start of a
// value that is not JSON, or that visit refused).
func ObjectError(b []byte, depth int, lens uint64, visit func(key []byte, v int, plain bool) int) (end int, err error) {
	end, why, at := object(b, depth, nil, lens, visit)
	return end, faultError(b, why, at)
}

// faultError is the error for object's fault why at b[at], nil for none.
func faultError(b []byte, why fault, at int) error {
	if why == noFault {
		return nil
	}
	return errAt(b, at, faults[why])
}

// KeyIs reports whether k, a key as Object passes it to visit, names key
// as a JSON parser reads it: a key with escapes (plain false) is compared
// with its escapes decoded, which Object checked.
func KeyIs(k []byte, plain bool, key string) bool {
	if plain {
		return string(k) == key
	}
	return unescapedEqual(k, key)
}

// KeyLengths is the lens of Object for keys: bit n is set when one of them
// is n bytes long, modulo 64 (a longer key is compared in vain, not missed).
func KeyLengths(keys ...string) uint64 {
	var lens uint64
	for _, k := range keys {
		lens |= 1 << (len(k) & 63)
	}
	return lens
}

// CheckValue checks the JSON value at b[i], a member or element of a
// container nested depth levels deep in its document (1: the top-level
// one), as Valid does, and returns the offset just past it, or below 0
// when it is not one.
func CheckValue(b []byte, i, depth int) int { return topValue(b, i, nil, maxDepth-depth) }

// fault is what object found wrong, at an offset it returns with it.
type fault uint8

const (
	noFault   fault = iota
	notObject       // no opening brace
	noKey           // no key where a member starts
	badKey          // a key that is no valid string (at its quote)
	noColon         // no colon after a key
	badValue        // a value that is not JSON (at its start), or that visit refused
	noComma         // neither a comma nor the closing brace after a value
)

// object is Object; f, if not nil, is what the check of the values looks
// for. On a fault, end is -1, and why and at say what and where. The
// separators of compact JSON (`":`, `,"`) are taken in one step.
func object(b []byte, depth int, f *finder, lens uint64, visit func(key []byte, v int, plain bool) int) (end int, why fault, at int) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errSyntax, notObject, i
	}
	if i = SkipSpace(b, i+1); i < len(b) && b[i] == '}' {
		return i + 1, noFault, 0
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errSyntax, noKey, i
		}
		ks := i + 1
		// A key that ends in its first four words (most do) is read
		// here: a call to stringEnd cost more than its reading of it.
		ke, plain := plainPrefix(b, ks), true
		if ke < len(b) && b[ke] == '"' {
			ke++
		} else if ke, plain = stringRest(b, ke, ke+16); ke < 0 {
			return errSyntax, badKey, i
		}
		if i = ke; i >= len(b) || b[i] != ':' {
			if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
				return errSyntax, noColon, i
			}
		}
		if i++; i < len(b) && b[i] <= ' ' {
			i = SkipSpace(b, i)
		}
		end := 0
		if !plain || lens>>((ke-1-ks)&63)&1 != 0 {
			end = visit(b[ks:ke-1], i, plain) // the key sliced only here
		}
		if end == 0 {
			end = topValue(b, i, f, maxDepth-depth)
		}
		if end < 0 {
			return errSyntax, badValue, i
		}
		if i = end; i >= len(b) || b[i] != ',' {
			if i = SkipSpace(b, i); i < len(b) && b[i] == '}' {
				return i + 1, noFault, 0
			}
			if i >= len(b) || b[i] != ',' {
				return errSyntax, noComma, i
			}
		}
		if i++; i < len(b) && b[i] <= ' ' {
			i = SkipSpace(b, i)
		}
	}
}
