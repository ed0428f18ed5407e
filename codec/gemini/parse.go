package gemini

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The decoders read Gemini's JSON with a cursor (parser) that walks the
// document once, validating each value as it reads or skips it, instead of
// unmarshalling it into structs, for three reasons:
//
//   - Gemini's parser (proto JSON) accepts every field under its
//     lowerCamelCase name and under its proto name in snake_case, and real
//     clients send both ("system_instruction", "inline_data", "mime_type"
//     next to "generationConfig"); it also takes a single value where a
//     list is expected. Struct tags see one spelling only.
//   - The walkers turn each part into canonical values as they read it,
//     with no intermediate slices: a text chunk of a stream decodes with no
//     allocation.
//   - One pass: every byte is looked at once (validation included), where
//     validating and then unmarshalling reads the document two or three
//     times.
//
// Strings without escapes point into the document; unescaped ones into a
// strDecoder's buffer. Raw values (arguments, schemas) are spans of the
// document, validated like the rest, so they can be copied to the output
// as they are.

var (
	errEmpty     = errors.New("gemini: empty body")
	errSyntax    = errors.New("gemini: invalid JSON")
	errNotObject = errors.New("gemini: want a JSON object")
)

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// parser is a cursor over one JSON document. Its methods read the value at
// the cursor and move past it; on malformed input they set err and move to
// the end, so that every loop over the document stops.
type parser struct {
	b     []byte
	i     int
	depth int
	err   bool
}

// list is the state of an object or array being read: first is set until
// the first member or element; single marks a lone value read as a list.
type list struct {
	first, single, done bool
}

func (p *parser) fail() {
	p.err = true
	p.i = len(p.b)
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value, or 0 at the end.
func (p *parser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// end reports whether only whitespace is left and nothing failed.
func (p *parser) end() bool {
	p.ws()
	return !p.err && p.i == len(p.b)
}

// object starts reading the object at the cursor. ok is false (and the
// value skipped) when it is another kind of value; null is an empty object.
func (p *parser) object() (l list, ok bool) {
	switch p.peek() {
	case '{':
		if p.depth++; p.depth > maxDepth {
			p.fail()
			return list{done: true}, false
		}
		p.i++
		return list{first: true}, true
	case 'n':
		return list{done: true}, p.null()
	}
	p.skip()
	return list{done: true}, false
}

// key reads the next member's key, leaving the cursor at its value (which
// the caller must read or skip). It returns false after the closing brace.
// The key is the raw text between the quotes.
func (p *parser) key(l *list) ([]byte, bool) {
	if l.done {
		return nil, false
	}
	c := p.peek()
	if c == '}' {
		p.i++
		p.depth--
		l.done = true
		return nil, false
	}
	if !l.first {
		if c != ',' {
			p.fail()
			l.done = true
			return nil, false
		}
		p.i++
		c = p.peek()
	}
	l.first = false
	if c != '"' {
		p.fail()
		l.done = true
		return nil, false
	}
	start, _ := p.scanString()
	end := p.i
	if p.peek() != ':' || p.err {
		p.fail()
		l.done = true
		return nil, false
	}
	p.i++
	return p.b[start+1 : end-1], true
}

// array starts reading a list at the cursor: an array, or, as Gemini
// allows, a single value standing for a list of one; null is empty.
func (p *parser) array() list {
	switch p.peek() {
	case '[':
		if p.depth++; p.depth > maxDepth {
			p.fail()
			return list{done: true}
		}
		p.i++
		return list{first: true}
	case 'n':
		p.null()
		return list{done: true}
	case 0:
		return list{done: true}
	}
	return list{single: true, first: true}
}

// elem moves to the next element of a list, leaving the cursor at it (the
// caller must read or skip it). It returns false after the list's end.
func (p *parser) elem(l *list) bool {
	if l.done {
		return false
	}
	if l.single {
		l.done = !l.first
		l.first = false
		return !l.done
	}
	c := p.peek()
	if c == ']' {
		p.i++
		p.depth--
		l.done = true
		return false
	}
	if !l.first {
		if c != ',' {
			p.fail()
			l.done = true
			return false
		}
		p.i++
		p.ws()
	}
	l.first = false
	return !p.err
}

// skip validates the value at the cursor and moves past it.
func (p *parser) skip() {
	switch c := p.peek(); {
	case c == '{':
		l, _ := p.object()
		for _, ok := p.key(&l); ok; _, ok = p.key(&l) {
			p.skip()
		}
	case c == '[':
		l := p.array()
		for p.elem(&l) {
			p.skip()
		}
	case c == '"':
		p.scanString()
	case c == 't':
		p.literal("true")
	case c == 'f':
		p.literal("false")
	case c == 'n':
		p.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		p.number()
	default:
		p.fail()
	}
}

// raw returns the value at the cursor as a validated span, nil for null.
func (p *parser) raw() []byte {
	if p.peek() == 'n' {
		p.null()
		return nil
	}
	start := p.i
	p.skip()
	if p.err {
		return nil
	}
	return p.b[start:p.i]
}

// null consumes a null if there is one.
func (p *parser) null() bool {
	if p.peek() == 'n' {
		p.literal("null")
		return !p.err
	}
	return false
}

func (p *parser) literal(lit string) {
	if len(p.b)-p.i < len(lit) || string(p.b[p.i:p.i+len(lit)]) != lit {
		p.fail()
		return
	}
	p.i += len(lit)
}

// number moves past a JSON number and returns its span.
func (p *parser) number() []byte {
	b, start := p.b, p.i
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		p.fail()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			p.fail()
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			p.fail()
			return nil
		}
		i = j
	}
	p.i = i
	return b[start:i]
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// scanString validates the string at the cursor (a quote) and moves past
// it. It returns where the string starts and whether it has escapes.
// String contents are read eight bytes at a time, each word that holds a
// quote, a backslash or a control character jumping to the first of them:
// the lowest byte the bit tricks flag is exact (a false flag, from a
// borrow, can only sit above a true one).
func (p *parser) scanString() (start int, escaped bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b := p.b
	start = p.i
	i := start + 1
	for {
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			q, e := w^'"'*ones, w^'\\'*ones // zero bytes where w has '"' or '\\'
			if m := ((w-0x20*ones)&^w | (q-ones)&^q | (e-ones)&^e) & highs; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) || b[i] < 0x20 {
			p.fail()
			return start, false
		}
		if b[i] == '"' {
			p.i = i + 1
			return start, escaped
		}
		n := rawjson.EscapeLen(b[i:])
		if n == 0 {
			p.fail()
			return start, false
		}
		escaped = true
		i += n
	}
}

// str reads a string value (null reads as ""); ok is false, and the value
// skipped, for another kind of value.
func (p *parser) str(sd *strDecoder) (string, bool) {
	switch p.peek() {
	case '"':
	case 'n':
		return "", p.null()
	default:
		p.skip()
		return "", false
	}
	start, escaped := p.scanString()
	if p.err {
		return "", false
	}
	v := p.b[start:p.i]
	if !escaped {
		return rawjson.UnsafeString(v[1 : len(v)-1]), true
	}
	return sd.unescape(v), true
}

// numberText reads a number value, or a quoted one (proto JSON writes
// 64-bit integers as strings and accepts them so), and returns its text.
func (p *parser) numberText() (string, bool) {
	switch c := p.peek(); {
	case c == '"':
		start, escaped := p.scanString()
		if p.err || escaped {
			return "", false
		}
		return rawjson.UnsafeString(p.b[start+1 : p.i-1]), true
	case c == '-' || '0' <= c && c <= '9':
		return rawjson.UnsafeString(p.number()), !p.err
	}
	p.skip()
	return "", false
}

// float reads a number value.
func (p *parser) float() (float64, bool) {
	s, ok := p.numberText()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// int reads an integral number value (40 and 40.0 alike).
func (p *parser) int() (int, bool) {
	s, ok := p.numberText()
	if !ok {
		return 0, false
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, false
	}
	return int(f), true
}

// bool reads a boolean value (null is false).
func (p *parser) bool() (bool, bool) {
	switch p.peek() {
	case 't':
		p.literal("true")
		return true, !p.err
	case 'f':
		p.literal("false")
		return false, !p.err
	case 'n':
		return false, p.null()
	}
	p.skip()
	return false, false
}

// fold returns the key k (the raw text between its quotes) folded for
// comparison with the names in the decoders' switches: lower case, without
// underscores, so that "system_instruction" and "systemInstruction" are one
// name. Keys with escapes are unescaped first; keys too long for buf match
// nothing.
func fold(buf *[40]byte, k []byte) []byte {
	if k = decodedKey(k); k == nil {
		return nil
	}
	n := 0
	for _, c := range k {
		if c == '_' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if n == len(buf) {
			return nil
		}
		buf[n] = c
		n++
	}
	return buf[:n]
}

// decodedKey returns the key k (the raw text between its quotes) with its
// escapes undone; nil when it is too long to have a name the decoders
// know, or not a key.
func decodedKey(k []byte) []byte {
	if bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	var q [48]byte
	if len(k)+2 > len(q) {
		return nil
	}
	quoted := append(append(append(q[:0], '"'), k...), '"')
	u, err := rawjson.AppendUnquote(q[:0:0], quoted)
	if err != nil {
		return nil
	}
	return u
}

// strDecoder holds unescaped strings. Their bytes are appended to buf,
// whose earlier contents are never overwritten until the owner truncates
// it.
type strDecoder struct {
	buf []byte
	// capHint sizes buf when the first escaped string comes (the size of
	// the document; the first allocation is capped at 8 KiB).
	capHint int
}

// unescape returns the contents of the valid JSON string v, which has
// escapes.
func (d *strDecoder) unescape(v []byte) string {
	if d.buf == nil {
		d.buf = make([]byte, 0, max(len(v), min(d.capHint, 8<<10)))
	}
	start := len(d.buf)
	d.buf, _ = rawjson.AppendUnquote(d.buf, v) // v is valid: no error
	return rawjson.UnsafeString(d.buf[start:])
}

// members iterates over the members of a JSON object without decoding it.
type members struct {
	b     []byte
	i     int
	begun bool
}

// next returns the next member: its key (the raw text between the quotes)
// and its value span. more is false at the end of the object; ok is false
// on malformed input.
func (m *members) next() (key, val []byte, more, ok bool) {
	b := m.b
	if !m.begun {
		m.begun = true
		m.i = rawjson.SkipSpace(b, 0)
		if m.i >= len(b) || b[m.i] != '{' {
			return nil, nil, false, false
		}
		m.i = rawjson.SkipSpace(b, m.i+1)
		if m.i < len(b) && b[m.i] == '}' {
			m.i++
			return nil, nil, false, true
		}
	} else {
		m.i = rawjson.SkipSpace(b, m.i)
		if m.i >= len(b) {
			return nil, nil, false, false
		}
		switch b[m.i] {
		case '}':
			m.i++
			return nil, nil, false, true
		case ',':
			m.i = rawjson.SkipSpace(b, m.i+1)
		default:
			return nil, nil, false, false
		}
	}
	if m.i >= len(b) || b[m.i] != '"' {
		return nil, nil, false, false
	}
	kend := rawjson.StringEnd(b, m.i)
	if kend < 0 {
		return nil, nil, false, false
	}
	key = b[m.i+1 : kend-1]
	m.i = rawjson.SkipSpace(b, kend)
	if m.i >= len(b) || b[m.i] != ':' {
		return nil, nil, false, false
	}
	m.i = rawjson.SkipSpace(b, m.i+1)
	vend := rawjson.ValueEnd(b, m.i)
	if vend < 0 {
		return nil, nil, false, false
	}
	val, m.i = b[m.i:vend], vend
	return key, val, true, true
}

// member returns the value of the member named key of the object obj (the
// first one, compared without unescaping).
func member(obj []byte, key string) ([]byte, bool) {
	it := members{b: obj}
	for {
		k, v, more, ok := it.next()
		if !ok || !more {
			return nil, false
		}
		if string(k) == key {
			return v, true
		}
	}
}

// validJSON reports whether b is one valid JSON value (strings included),
// by the decoders' own reading.
func validJSON(b []byte) bool {
	p := parser{b: b}
	p.skip()
	return p.end()
}

// validObject reports what validJSON reports of b, an object as far as its
// first byte goes, in a fraction of the time for most objects: sonic.Valid
// (structure, in SIMD) with rawjson.ValidStrings (the strings, which sonic
// does not check) accept them. What those two refuse, validJSON reads and
// has the last word on. FuzzValidObject checks that they accept nothing
// validJSON refuses.
func validObject(b []byte) bool {
	if len(b) > 0 && b[0] == '{' && sonic.Valid(b) && rawjson.ValidStrings(b) {
		return true
	}
	return validJSON(b)
}

func trimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// appendCompact appends the JSON value v without the whitespace outside its
// strings.
func appendCompact(dst, v []byte) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := rawjson.StringEnd(v, i)
			if end < 0 {
				return append(dst, v[i:]...)
			}
			dst = append(dst, v[i:end]...)
			i = end - 1
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// rawString returns the raw JSON value v as canonical text: v itself, or,
// when it spans several lines (Gemini pretty-prints whole responses), a
// compact copy.
func rawString(v []byte) string {
	if bytes.IndexByte(v, '\n') < 0 {
		return rawjson.UnsafeString(v)
	}
	return rawjson.UnsafeString(appendCompact(make([]byte, 0, len(v)), v))
}
