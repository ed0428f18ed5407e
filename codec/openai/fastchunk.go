package openai

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The fast path. Most events of a stream are text deltas of one shape;
// fastChunk reads those (and role, reasoning and finish chunks, and tool call
// fragments that carry only arguments) with a hand-written scanner that
// allocates nothing, and declines everything else (a call's first fragment,
// usage, errors, escaped keys, several choices, unknown nested values,
// duplicate keys, anything malformed) to the sonic path. When it
// accepts a chunk, its view equals the sonic path's (a differential test and
// a fuzz target check this).
//
// The chunks of one stream repeat the same bytes up to the delta
// (`{"id":…,"object":…,"created":…,"model":…,…,"choices":[{"index":0,"delta":`).
// After a chunk is read in full, the scanner's state where the delta starts
// is kept with a copy of those bytes; a next chunk that starts with the same
// bytes is read from the delta on. The scanner is deterministic, so the
// result is what a full read gives.

// Bits for duplicate-key detection, one per known key of each object.
const (
	seenID = 1 << iota
	seenModel
	seenChoices
	seenUsage
	seenError
	seenIndex
	seenDelta
	seenFinish
	seenRole
	seenContent
	seenRefusal
	seenReasoningContent
	seenReasoning
	seenToolCalls
	seenFunctionCall
	seenThinkingBlocks
	seenFunction
	seenArguments
)

// The objects of a chunk, for member dispatch.
const (
	levelTop = iota
	levelChoice
	levelDelta
	levelToolCall // an element of delta.tool_calls
	levelFunction // its function
)

// fastScan is a cursor over one chunk.
type fastScan struct {
	b     []byte
	i     int
	buf   []byte // unescaped strings
	v     *chunkView
	calls *[]wireToolCall // the decoder's storage for a tool call fragment
	seen  int             // keys seen in the current object
	// reasoningContent and reasoning of the delta, merged at its end.
	reasoningContent, reasoning string
	// Where the delta value starts, and the state there: cut is 0 when the
	// prefix cannot be reused (a string in it was unescaped, or it set
	// more than id and model).
	cut                 int
	cutTop, cutChoice   int
	idAt, modelAt       [2]int
	idEscaped, modelEsc bool
	// The spans of the delta's content string and of the last string whose
	// value is skipped, quotes included ({0, 0} for none), for textShape.
	contentAt, skippedAt [2]int
	escapes              bool // a string read since plainString cleared it had escapes
}

// prefixState is the scanner state kept from the last chunk read in full.
type prefixState struct {
	prefix        []byte // the chunk's bytes before its delta
	top, choice   int    // seen bits of the top-level and choice objects there
	idAt, modelAt [2]int // spans of id and model in the prefix, {-1, -1} if absent
}

func (d *StreamDecoder) fastChunk(data []byte, v *chunkView) bool {
	if t := &d.shape; len(t.head) > 0 && bytes.HasPrefix(data, t.head) {
		if d.shapedChunk(data, v) {
			return true
		}
		*v = chunkView{}
	}
	s := fastScan{b: data, buf: d.buf, v: v, calls: &d.fastCalls}
	if p := &d.prefix; len(p.prefix) > 0 && bytes.HasPrefix(data, p.prefix) {
		s.idAt, s.modelAt = p.idAt, p.modelAt
		ok := s.resume(p)
		d.buf = s.buf
		if ok {
			d.keepShape(&s)
			return true
		}
		*v = chunkView{}
		s = fastScan{b: data, buf: d.buf, v: v, calls: &d.fastCalls}
	}
	s.idAt, s.modelAt = [2]int{-1, -1}, [2]int{-1, -1}
	ok := s.chunk()
	d.buf = s.buf
	if !ok {
		*v = chunkView{} // slowChunk sets only some fields: none may stay from the scan
		return false
	}
	d.keepPrefix(&s)
	d.keepShape(&s)
	return true
}

// textShape is the last text chunk read, but for its text and the value of
// one string the scanner skips (api.openai.com's obfuscation, of random
// length, ends every chunk): head runs up to the text's opening quote,
// mid from its closing quote to the skipped string's opening quote, tail
// after that string to the end; without a skipped string after the text,
// mid is the rest and tail empty. A chunk made of the same bytes but for
// those two strings reads as that chunk but for its text, since the scanner
// is deterministic and looks inside a string only to read it: shapedChunk
// reads the two strings as the scanner does and compares the rest.
type textShape struct {
	head, mid, tail []byte
	skipped         bool
	idAt, modelAt   [2]int // spans in head, {-1, -1} for none
}

// keepShape keeps the shape of a chunk read by s, when it is a text delta
// whose view holds nothing else but an id and a model read from its head.
func (d *StreamDecoder) keepShape(s *fastScan) {
	t, v, c := &d.shape, s.v, s.contentAt
	t.head = t.head[:0]
	if c[1] == 0 || v.reasoning != "" || v.refusal != "" || v.finish != "" || v.hasUsage || v.toolCalls != nil ||
		!headString(v.id, s.idAt, s.idEscaped, c[0]) || !headString(v.model, s.modelAt, s.modelEsc, c[0]) {
		return
	}
	t.head = append(t.head, s.b[:c[0]+1]...)
	t.idAt, t.modelAt = s.idAt, s.modelAt
	if v.id == "" {
		t.idAt = [2]int{-1, -1}
	}
	if v.model == "" {
		t.modelAt = [2]int{-1, -1}
	}
	k := s.skippedAt
	t.skipped = k[0] >= c[1]
	if !t.skipped {
		t.mid, t.tail = append(t.mid[:0], s.b[c[1]:]...), t.tail[:0]
		return
	}
	t.mid, t.tail = append(t.mid[:0], s.b[c[1]:k[0]]...), append(t.tail[:0], s.b[k[1]:]...)
}

// headString reports whether a string of the view is empty, or a view of
// the input (not unescaped) that ends before limit.
func headString(v string, at [2]int, escaped bool, limit int) bool {
	return v == "" || !escaped && at[0] >= 0 && at[1] < limit
}

// shapedChunk reads a chunk of the kept shape, if it is one.
func (d *StreamDecoder) shapedChunk(data []byte, v *chunkView) bool {
	t := &d.shape
	i, plain, ok := d.readString(data, len(t.head)-1, &v.content)
	v.contentPlain = plain
	ok = ok && bytes.HasPrefix(data[i:], t.mid)
	i += len(t.mid)
	if ok && t.skipped {
		var ignored string
		i, _, ok = d.readString(data, i, &ignored)
	}
	if !ok || string(data[i:]) != string(t.tail) {
		return false
	}
	v.hasChoice = true
	if t.idAt[0] >= 0 {
		v.id = rawjson.UnsafeString(data[t.idAt[0]:t.idAt[1]])
	}
	if t.modelAt[0] >= 0 {
		v.model = rawjson.UnsafeString(data[t.modelAt[0]:t.modelAt[1]])
	}
	return true
}

// readString reads the string whose opening quote is data[i] into dst as
// the scanner's string does, and returns the offset after it and whether
// it had no escapes. A string with no escapes, the usual, is read without
// making a scanner.
func (d *StreamDecoder) readString(data []byte, i int, dst *string) (next int, plain, ok bool) {
	if i < len(data) && data[i] == '"' {
		j, high := specialAt(data[i+1:])
		if j += i + 1; j < len(data) && data[j] == '"' && (!high || utf8.Valid(data[i+1:j])) {
			*dst = rawjson.UnsafeString(data[i+1 : j])
			return j + 1, true, true
		}
	}
	s := fastScan{b: data, i: i, buf: d.buf}
	ok = s.string(dst)
	d.buf = s.buf
	return s.i, !s.escapes, ok
}

// keepPrefix keeps the state of a chunk read in full at its delta, when it
// can be reused.
func (d *StreamDecoder) keepPrefix(s *fastScan) {
	p := &d.prefix
	if s.cut == 0 || s.cutTop&^(seenID|seenModel|seenChoices) != 0 || s.cutChoice&^(seenIndex|seenDelta) != 0 ||
		s.cutTop&seenID != 0 && s.idEscaped || s.cutTop&seenModel != 0 && s.modelEsc {
		p.prefix = p.prefix[:0]
		return
	}
	p.prefix = append(p.prefix[:0], s.b[:s.cut]...)
	p.top, p.choice, p.idAt, p.modelAt = s.cutTop, s.cutChoice, s.idAt, s.modelAt
	// An id or model after the choices is read again from each chunk.
	if s.cutTop&seenID == 0 {
		p.idAt = [2]int{-1, -1}
	}
	if s.cutTop&seenModel == 0 {
		p.modelAt = [2]int{-1, -1}
	}
}

// resume reads a chunk whose bytes up to its delta are p.prefix.
func (s *fastScan) resume(p *prefixState) bool {
	v := s.v
	if p.idAt[0] >= 0 {
		v.id = rawjson.UnsafeString(s.b[p.idAt[0]:p.idAt[1]])
	}
	if p.modelAt[0] >= 0 {
		v.model = rawjson.UnsafeString(s.b[p.modelAt[0]:p.modelAt[1]])
	}
	v.hasChoice = true
	s.i, s.seen = len(p.prefix), p.choice
	if !s.delta() || !s.rest(levelChoice) {
		return false
	}
	s.ws()
	if !s.eat(']') {
		return false
	}
	s.seen = p.top
	if !s.rest(levelTop) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *fastScan) ws() {
	for s.i < len(s.b) {
		// Compact JSON has no whitespace: one comparison settles it.
		if c := s.b[s.i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		s.i++
	}
}

func (s *fastScan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *fastScan) lit(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// object reads an object of the given level; member reads each value.
func (s *fastScan) object(level int) bool {
	s.ws()
	if !s.eat('{') {
		return false
	}
	s.ws()
	if s.eat('}') {
		return true
	}
	return s.members(level)
}

// members reads the members of an object from a key on, to its end.
func (s *fastScan) members(level int) bool {
	for {
		if !s.eat('"') {
			return false
		}
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' {
			if c := s.b[s.i]; c == '\\' || c < 0x20 {
				return false // keys are short and plain: escapes go to sonic
			}
			s.i++
		}
		if s.i == len(s.b) {
			return false
		}
		key := s.b[start:s.i]
		s.i++
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if !s.member(level, key) {
			return false
		}
		s.ws()
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
		s.ws()
	}
}

// rest reads the rest of an object after a member's value.
func (s *fastScan) rest(level int) bool {
	s.ws()
	if s.eat('}') {
		return true
	}
	if !s.eat(',') {
		return false
	}
	s.ws()
	return s.members(level)
}

// once marks a key as seen and reports whether it was new.
func (s *fastScan) once(bit int) bool {
	if s.seen&bit != 0 {
		return false
	}
	s.seen |= bit
	return true
}

func (s *fastScan) member(level int, key []byte) bool {
	v := s.v
	switch level {
	case levelTop:
		switch string(key) {
		case "id":
			start := s.i
			if !s.once(seenID) {
				return false
			}
			plain, ok := s.plainString(&v.id)
			s.idAt, s.idEscaped = [2]int{start + 1, s.i - 1}, !plain
			return ok
		case "model":
			start := s.i
			if !s.once(seenModel) {
				return false
			}
			plain, ok := s.plainString(&v.model)
			s.modelAt, s.modelEsc = [2]int{start + 1, s.i - 1}, !plain
			return ok
		case "choices":
			return s.once(seenChoices) && s.choices()
		case "usage":
			return s.once(seenUsage) && s.lit("null")
		case "error":
			return s.once(seenError) && s.lit("null")
		case "object", "created", "service_tier", "system_fingerprint", "obfuscation":
			return s.skipScalar()
		}
	case levelChoice:
		switch string(key) {
		case "index":
			return s.once(seenIndex) && s.lit("0") && s.numberEnds()
		case "delta":
			if !s.once(seenDelta) {
				return false
			}
			s.cut, s.cutChoice = s.i, s.seen
			return s.delta()
		case "finish_reason":
			return s.once(seenFinish) && s.nullableString(&v.finish)
		case "logprobs":
			return s.skipScalar()
		}
	case levelToolCall:
		c := &(*s.calls)[0]
		switch string(key) {
		case "index":
			start := s.i
			if !s.once(seenIndex) || !s.number() {
				return false
			}
			c.Index = s.b[start:s.i] // raw, as sonic keeps it
			return true
		case "function":
			if !s.once(seenFunction) {
				return false
			}
			outer := s.seen
			s.seen = 0
			ok := s.object(levelFunction)
			s.seen = outer
			return ok
		case "id", "type":
			return false // a call's first fragment: rare, sonic reads it
		}
	case levelFunction:
		switch string(key) {
		case "arguments":
			return s.once(seenArguments) && s.nullableString(&(*s.calls)[0].Function.Arguments)
		case "name":
			return false
		}
	case levelDelta:
		var role string
		switch string(key) {
		case "role":
			return s.once(seenRole) && s.nullableString(&role)
		case "content":
			start := s.i
			if !s.once(seenContent) {
				return false
			}
			plain, ok := s.plainString(&v.content)
			if ok && s.b[start] == '"' {
				s.contentAt, v.contentPlain = [2]int{start, s.i}, plain
			}
			return ok
		case "refusal":
			return s.once(seenRefusal) && s.nullableString(&v.refusal)
		case "reasoning_content":
			return s.once(seenReasoningContent) && s.nullableString(&s.reasoningContent)
		case "reasoning":
			return s.once(seenReasoning) && s.nullableString(&s.reasoning)
		case "tool_calls":
			return s.once(seenToolCalls) && (s.lit("null") || s.toolCalls())
		case "function_call":
			return s.once(seenFunctionCall) && s.lit("null")
		case "thinking_blocks":
			return s.once(seenThinkingBlocks) && s.lit("null")
		}
	}
	// A key the wire structs do not have: its scalar value is skipped, as
	// sonic (case-sensitive here) skips it.
	return s.skipScalar()
}

func (s *fastScan) chunk() bool {
	s.seen = 0
	if !s.object(levelTop) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *fastScan) choices() bool {
	if s.lit("null") {
		return true
	}
	if !s.eat('[') {
		return false
	}
	s.ws()
	if s.eat(']') {
		return true
	}
	outer := s.seen
	s.cutTop = outer
	s.seen = 0
	s.v.hasChoice = true
	ok := s.object(levelChoice)
	s.seen = outer
	if !ok {
		return false
	}
	s.ws()
	return s.eat(']') // a second choice goes to sonic
}

// numberEnds reports whether a number token ended at the cursor ("0" and
// not "01" or "0.5").
func (s *fastScan) numberEnds() bool {
	if s.i == len(s.b) {
		return true
	}
	switch s.b[s.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// delta reads the delta object (or null). As on the sonic path, the
// reasoning text is reasoning_content, else reasoning.
func (s *fastScan) delta() bool {
	if s.lit("null") {
		return true
	}
	outer := s.seen
	s.seen = 0
	s.reasoningContent, s.reasoning = "", ""
	ok := s.object(levelDelta)
	s.seen = outer
	s.v.reasoning = s.reasoningContent
	if s.v.reasoning == "" {
		s.v.reasoning = s.reasoning
	}
	return ok
}

// toolCalls reads a tool_calls array of one fragment that carries only
// arguments (the bulk of a tool call's stream) into s.calls.
func (s *fastScan) toolCalls() bool {
	if !s.eat('[') {
		return false
	}
	*s.calls = append((*s.calls)[:0], wireToolCall{})
	outer := s.seen
	s.seen = 0
	ok := s.object(levelToolCall)
	s.seen = outer
	if !ok {
		return false
	}
	s.ws()
	if !s.eat(']') { // several calls in one delta go to sonic
		return false
	}
	s.v.toolCalls = *s.calls
	return true
}

// plainString reads a nullable string, and reports whether it is a quoted
// string without escapes: a view of the input that needs no escaping. The
// length cannot tell: an escape shortens what an invalid byte, made U+FFFD,
// lengthens.
func (s *fastScan) plainString(dst *string) (plain, ok bool) {
	quoted := s.i < len(s.b) && s.b[s.i] == '"'
	s.escapes = false
	ok = s.nullableString(dst)
	return quoted && !s.escapes, ok
}

func (s *fastScan) nullableString(dst *string) bool {
	if s.lit("null") {
		*dst = ""
		return true
	}
	return s.string(dst)
}

// string reads a string value: a view of the input when it has no
// escapes, else its unescaped copy in s.buf.
func (s *fastScan) string(dst *string) bool {
	if !s.eat('"') {
		return false
	}
	start := s.i
	j, high := specialAt(s.b[start:])
	i := start + j
	switch {
	case i == len(s.b):
		return false
	case s.b[i] == '"':
		if high && !utf8.Valid(s.b[start:i]) {
			return false // sonic replaces invalid UTF-8
		}
		*dst, s.i = rawjson.UnsafeString(s.b[start:i]), i+1
		return true
	case s.b[i] == '\\':
		return s.escaped(dst, start, i)
	}
	return false // a control character
}

// specialAt returns the index of the first quote, backslash or control
// character in b, or len(b), and whether a byte before it may be above
// ASCII (false: they are all ASCII, valid UTF-8 without a look). It reads
// eight bytes at a time: most strings of a chunk (ids, text) have none of
// them until their end.
func specialAt(b []byte) (int, bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i, seen := 0, uint64(0)
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, e := w^('"'*ones), w^('\\'*ones) // zero bytes where w has '"' or '\\'
		if ((w-0x20*ones)&^w|(q-ones)&^q|(e-ones)&^e)&highs != 0 {
			break
		}
		seen |= w
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c == '"' || c == '\\' || c < 0x20 {
			return i, seen&highs != 0
		}
		seen |= uint64(c)
	}
	return len(b), seen&highs != 0
}

// escaped reads the rest of a string that has escapes, from b[i] (a
// backslash); b[start:i] is its plain beginning.
func (s *fastScan) escaped(dst *string, start, i int) bool {
	s.escapes = true
	off := len(s.buf)
	s.buf = rawjson.AppendUTF8(s.buf, s.b[start:i])
	for i < len(s.b) {
		switch c := s.b[i]; {
		case c == '"':
			// Earlier strings of this event stay valid if an append moved
			// the buffer: they keep the old array.
			*dst, s.i = rawjson.UnsafeString(s.buf[off:]), i+1
			return true
		case c == '\\':
			r, n := unescape(s.b[i:])
			if n == 0 {
				return false
			}
			s.buf = utf8.AppendRune(s.buf, r)
			i += n
		case c < 0x20:
			return false
		default:
			k, _ := specialAt(s.b[i:])
			j := i + k
			s.buf = rawjson.AppendUTF8(s.buf, s.b[i:j])
			i = j
		}
	}
	return false
}

// unescape decodes the escape at the start of b. Lone surrogates are left
// to sonic (n == 0), as are invalid escapes.
func unescape(b []byte) (r rune, n int) {
	r, n, lone := rawjson.DecodeEscape(b)
	if lone {
		return 0, 0
	}
	return r, n
}

// skipScalar skips a string, number, true, false or null; containers are
// declined.
func (s *fastScan) skipScalar() bool {
	if s.i == len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		var ignored string
		start := s.i
		if !s.string(&ignored) {
			return false
		}
		s.skippedAt = [2]int{start, s.i}
		return true
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// number skips a number, checking JSON's grammar.
func (s *fastScan) number() bool {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.eat('.') && s.digits() == 0 {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return s.numberEnds()
}

func (s *fastScan) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
