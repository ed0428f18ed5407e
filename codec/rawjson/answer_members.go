package rawjson

// The steps of Object's loop, for a reader that walks a small object in a
// loop of its own (a whole answer's usage, read on every request): no call
// per member, and the keys it knows matched in place (KeyTable) rather
// than searched for their closing quote (KeyEnd). A reader that takes
// these steps as below accepts what Object accepts and ends where it ends:
//
//	i, closed := rawjson.OpenObject(b, 0)
//	for !closed {
//		if i < 0 || i >= len(b) || b[i] != '"' { ...not an object }
//		ke, plain := rawjson.KeyEnd(b, i+1)     // or KeyTable.Match's end
//		v := rawjson.MemberValue(b, ke)         // ke < 0 gives -1
//		end := rawjson.CheckValue(b, v, depth)  // or the caller's own check
//		i, closed = rawjson.NextMember(b, end)  // end < 0 gives -1
//	}
//	// the object ends just before b[i]

// OpenObject reads the opening brace of the object at b[i] (whitespace
// before it allowed) and the whitespace after it: next is the offset of
// the first member's key, or, when closed, just past the closing brace of
// an empty object; -1 when there is no brace.
func OpenObject(b []byte, i int) (next int, closed bool) {
	if i = SkipSpace(b, i); i >= len(b) || b[i] != '{' {
		return -1, false
	}
	if i = SkipSpace(b, i+1); i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	return i, false
}

// KeyEnd returns the offset just past the closing quote of the key whose
// contents start at b[i] (just past its opening quote), or -1 when they are
// no valid string contents; plain reports a key without escapes.
func KeyEnd(b []byte, i int) (end int, plain bool) { return stringEnd(b, i) }

// MemberValue returns the offset of the value of the member whose key ends
// just before b[i] (below 0: it did not end), past the colon and the
// whitespace around it, or -1 when no colon follows the key.
func MemberValue(b []byte, i int) int {
	if i > 0 && i < len(b)-1 && b[i] == ':' && b[i+1] > ' ' {
		return i + 1 // compact JSON: in a call that inlines
	}
	return memberValue(b, i)
}

func memberValue(b []byte, i int) int {
	if i < 0 {
		return -1
	}
	if i >= len(b) || b[i] != ':' {
		if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
			return -1
		}
	}
	if i++; i < len(b) && b[i] <= ' ' {
		i = SkipSpace(b, i)
	}
	return i
}

// NextMember reads what follows the member value that ends just before
// b[i] (below 0: it did not end): next is the offset of the next member's
// key, past the comma and the whitespace around it, or, when closed, just
// past the object's closing brace; -1 when neither follows.
func NextMember(b []byte, i int) (next int, closed bool) {
	if i > 0 && i < len(b)-1 && b[i] == ',' && b[i+1] > ' ' {
		return i + 1, false // compact JSON: in a call that inlines
	}
	return nextMember(b, i)
}

func nextMember(b []byte, i int) (next int, closed bool) {
	if i < 0 {
		return -1, false
	}
	if i >= len(b) || b[i] != ',' {
		if i = SkipSpace(b, i); i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		if i >= len(b) || b[i] != ',' {
			return -1, false
		}
	}
	if i++; i < len(b) && b[i] <= ' ' {
		i = SkipSpace(b, i)
	}
	return i, false
}

// A KeyTable finds which of a few keys a reader knows an object's key
// is, when it is spelled without escapes: by its first 8 bytes, hashed to
// one of the table's slots (or the next one, for a key that shares them
// with another, as prompt_tokens_details does with prompt_tokens), then
// compared a word at a time with the object's bytes in place, not
// searched for its closing quote (Match).
type KeyTable struct {
	slots [keySlots]spelling
	mul   uint64 // the multiplier that hashes the keys' first words to their slots
}

// keySlots is the number of a KeyTable's slots, and keySlotBits its log.
const (
	keySlots    = 8
	keySlotBits = 3
)

// A spelling is a key and its closing quote, held as the words at off in
// it (the last 8 bytes last: for a key of fewer than 24, some twice).
type spelling struct {
	words [4]uint64
	off   [4]uint8
	n     uint8 // the key's length, its quote included
	k     int8  // its index among the keys of NewKeyTable; -1 in a free slot
}

// NewKeyTable is the KeyTable of keys, at most 8, each 8 to 31 bytes of
// printable ASCII without quotes or backslashes, no three alike in their
// first 8 bytes: it is made once, when its reader's package starts.
func NewKeyTable(keys ...string) *KeyTable {
	t := new(KeyTable)
	// Odd multipliers from the golden ratio's on, until one puts each key
	// in its slot: with 5 keys in 8 slots, about 1 in 10 does.
	mul := uint64(0x9E3779B97F4A7C15)
	for range 1 << 16 {
		if t.fill(keys, mul) {
			return t
		}
		mul += 2
	}
	panic("rawjson.NewKeyTable: no slots for the keys")
}

// fill puts keys in t's slots by the multiplier mul, and reports whether
// each has its slot: the one its first word hashes to, or the next one
// when that holds a key of the same first word.
func (t *KeyTable) fill(keys []string, mul uint64) bool {
	t.mul = mul
	for i := range t.slots {
		t.slots[i] = spelling{k: -1}
	}
	for k, key := range keys {
		s := spell(key)
		s.k = int8(k)
		h := t.slot(s.words[0])
		if t.slots[h].k >= 0 {
			if t.slots[h].words[0] != s.words[0] {
				return false
			}
			h = (h + 1) % keySlots
		}
		if t.slots[h].k >= 0 {
			return false
		}
		t.slots[h] = s
	}
	return true
}

// slot is the slot a key whose first word is w hashes to.
func (t *KeyTable) slot(w uint64) uint64 { return w * t.mul >> (64 - keySlotBits) }

// spell is the spelling of key, checked for what a KeyTable holds.
func spell(key string) spelling {
	if len(key) < 8 || len(key) > 31 {
		panic("rawjson.NewKeyTable: a key of 8 to 31 bytes: " + key)
	}
	for _, c := range []byte(key) {
		if c < ' ' || c > '~' || c == '"' || c == '\\' {
			panic("rawjson.NewKeyTable: a key of printable ASCII without quotes or backslashes: " + key)
		}
	}
	return spellLiteral(key + `"`)
}

// spellLiteral is the spelling of lit, 8 to 32 bytes.
func spellLiteral(lit string) spelling {
	if len(lit) < 8 || len(lit) > 32 {
		panic("rawjson: a literal of 8 to 32 bytes: " + lit)
	}
	s := spelling{n: uint8(len(lit))}
	for j := range s.off {
		s.off[j] = uint8(min(8*j, len(lit)-8))
		s.words[j] = word([]byte(lit), int(s.off[j]))
	}
	return s
}

// Match reports which of t's keys the key whose contents start at b[i]
// (just past its opening quote) is, spelled as it is without escapes:
// k is its index among the keys of NewKeyTable and end the offset just
// past its closing quote, what KeyEnd returns for it; k is -1 for any
// other key, which KeyEnd then reads.
func (t *KeyTable) Match(b []byte, i int) (k, end int) {
	if i < 0 || i+8 > len(b) {
		return -1, 0
	}
	w := word(b, i)
	h := t.slot(w)
	if s := &t.slots[h]; s.words[0] == w && s.at(b, i) {
		return int(s.k), i + int(s.n)
	}
	if s := &t.slots[(h+1)%keySlots]; s.words[0] == w && s.at(b, i) {
		return int(s.k), i + int(s.n)
	}
	return -1, 0
}

// at reports whether b[i:] starts with s, whose first word is there.
func (s *spelling) at(b []byte, i int) bool {
	return i+int(s.n) <= len(b) && word(b, i+int(s.off[1])) == s.words[1] &&
		word(b, i+int(s.off[2])) == s.words[2] && word(b, i+int(s.off[3])) == s.words[3]
}
