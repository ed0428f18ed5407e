package gemini

import (
	"bytes"
	"encoding/binary"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The fast path of StreamDecoder. Nearly every chunk of a Gemini stream is
// a text (or thought) delta of one shape:
//
//	{"candidates": [{"content": {"parts": [{"text": "…"}],"role": "model"},"index": 0}],
//	 "usageMetadata": {"promptTokenCount": 12,…,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 12}]},
//	 "modelVersion": "gemini-2.5-flash","responseId": "…"}
//
// readChunk reads it with a parser that folds every key (proto JSON takes
// camelCase and snake_case names) and validates every value as it goes;
// the keys and the usage Gemini repeats on every chunk were most of the
// cost. fastChunk reads that one shape instead: keys are compared whole
// against the camelCase spellings Gemini writes (no folding, no escapes),
// and values are read with the parser's own string scanner. It declines
// everything else — another spelling of a key, a key it does not know, a
// duplicate key, null, a number that is not a plain integer, several
// candidates, a part with other than text, thought and thoughtSignature,
// promptFeedback, an error, anything malformed — and Decode then reads
// the chunk with readChunk. When fastChunk accepts a chunk, what it reads
// equals what readChunk reads (an internal test and fuzz/ check this).

// The chunks of one stream repeat the same bytes but for the values: the
// text, the counts of usageMetadata, the ids. After fastChunk reads a chunk
// in full, the chunk is kept as a template: its bytes, with the values it
// read marked as holes. A next chunk that is the template with each hole
// filled by a value of the same kind (a string, a count) is read by
// replaying the template: the bytes between the holes are compared, the
// values read. The scanner's path through a chunk depends only on the
// bytes between the values and on where each value ends, so the replay
// reads what fastChunk would.

// maxFastParts bounds the parts of a chunk the fast path takes.
const maxFastParts = 4

// maxHoles bounds the values of a template, maxTemplate its size (a
// decoder keeps it for the whole stream; in a long chunk the text costs
// more than the rest anyway).
const (
	maxHoles    = 24
	maxTemplate = 2 << 10
)

// fastPart is a part of the kinds the fast path takes.
type fastPart struct {
	text, sig string
	thought   bool
	plain     bool // text needs no escaping (codec.Event.Plain)
}

// holeKind says what a value of a template is read into: the kinds from
// holeCount on are counts, the others strings.
type holeKind uint8

const (
	holeOther holeKind = iota // a string that is read and dropped
	holeText
	holeSig
	holeModel
	holeResponseID
	holeFinish
	holeCount // a count that is read and dropped
	holePrompt
	holeCandidates
	holeThoughts
	holeCached
	holeToolUse
	holeNone // no value: the last step of a replay
)

// hole is a value of a template: its span, and for a part's value the
// part's ordinal. A fixed hole is a string that stays the same across a
// stream (the ids, the role, a modality), or a count the first replay
// found the same as the template's (the prompt's tokens, the thoughts'
// once the answer began, the index): the replay compares it with the
// bytes around it instead of reading it. A fixed count that changes after
// all fails the comparison, and fastChunk reads that chunk in full and
// makes it the template, its counts read again until its first replay.
type hole struct {
	at, end int32
	kind    holeKind
	part    uint8
	fixed   bool
}

// template is the last chunk fastChunk read in full.
type template struct {
	b         []byte // its bytes; empty when there is none
	holes     []hole
	holeBuf   [maxHoles]hole
	lit       []byte // b, its counts the last replay's: what the steps compare
	steps     []step // the replay, compiled from the holes
	stepBuf   [maxHoles + 1]step
	counts    []countHole // the counts the steps read, in order
	countBuf  [maxHoles]countHole
	model, id string // the fixed modelVersion and responseId, in b
	parts     int
	learnt    bool            // the first replay fixed the counts that stayed
	at        [maxHoles]int32 // where the first replay read each count
}

// step is one step of a replay: lit, bytes of the template, compared with
// the chunk's at once, then the string value of a hole of kind read from
// the chunk. Its counts, the template's from the last step's counts up to
// its own (an end index), lie in lit, at the same offsets in every chunk:
// each is read from the chunk and copied into lit before the comparison,
// which so checks every byte around them (the fixed holes among them) in
// one run, where a step per count would compare a run between each two.
type step struct {
	lit    []byte // a view of the template's lit
	counts uint8
	kind   holeKind
	part   uint8
}

// countHole is a count a step reads, of vlen digits at off in its lit.
// One whose digits end 8 bytes or more into the lit (every count but one
// right after a string, which the keys before them rule out), and of at
// most 8 digits, is read and copied as the word that ends with it: mask
// keeps its digits, keep the template's bytes before them.
type countHole struct {
	off, vlen  int32
	kind       holeKind
	hole       uint8 // its index in the template's holes
	word       bool
	mask, keep uint64
}

// compile turns the holes into the steps of the replay: each fixed hole
// joins the bytes compared around it, and a count the bytes of its step,
// so that a replay compares one run of bytes before each string it
// reads. The fixed modelVersion and responseId a replay reads are the
// template's own bytes.
func (t *template) compile() {
	t.steps, t.counts = t.stepBuf[:0], t.countBuf[:0]
	t.lit = append(t.lit[:0], t.b...)
	t.model, t.id = "", ""
	run := int32(0) // where the literal bytes of the next step start
	for k, h := range t.holes {
		switch {
		case h.fixed:
			switch h.kind {
			case holeModel:
				t.model = rawjson.UnsafeString(t.b[h.at+1 : h.end-1])
			case holeResponseID:
				t.id = rawjson.UnsafeString(t.b[h.at+1 : h.end-1])
			}
		case h.kind >= holeCount:
			t.counts = append(t.counts, t.countHole(h, uint8(k), run))
		default:
			t.steps = append(t.steps, step{lit: t.lit[run:h.at], counts: uint8(len(t.counts)), kind: h.kind, part: h.part})
			run = h.end
		}
	}
	t.steps = append(t.steps, step{lit: t.lit[run:], counts: uint8(len(t.counts)), kind: holeNone})
}

// countHole is the count hole h (the k-th) of the step whose lit starts
// at run.
func (t *template) countHole(h hole, k uint8, run int32) countHole {
	c := countHole{off: h.at - run, vlen: h.end - h.at, kind: h.kind, hole: k}
	if c.vlen <= 8 && c.off+c.vlen >= 8 {
		c.word, c.mask = true, digitsMask[c.vlen]
		c.keep = rawjson.Word(t.b, int(h.end)-8) &^ c.mask
	}
	return c
}

// fastScan is a cursor over one chunk. It uses the parser's scanner for
// whitespace and strings; err is set when it declines.
type fastScan struct {
	parser
	sd      *strDecoder
	c       *wireChunk
	parts   []fastPart
	holes   []hole
	tooMany bool // more values than a template holds
	plain   bool // the last string read is plain (parser.text)
}

// The keys of each object the fast path knows, with their quotes.
var (
	fastTopKeys       = [...]string{`"candidates"`, `"usageMetadata"`, `"modelVersion"`, `"responseId"`}
	fastCandidateKeys = [...]string{`"content"`, `"finishReason"`, `"index"`}
	fastContentKeys   = [...]string{`"parts"`, `"role"`}
	fastPartKeys      = [...]string{`"text"`, `"thoughtSignature"`, `"thought"`}
	fastUsageKeys     = [...]string{`"promptTokenCount"`, `"candidatesTokenCount"`, `"totalTokenCount"`,
		`"thoughtsTokenCount"`, `"cachedContentTokenCount"`, `"toolUsePromptTokenCount"`,
		`"promptTokensDetails"`, `"candidatesTokensDetails"`, `"cacheTokensDetails"`, `"toolUsePromptTokensDetails"`}
	fastDetailKeys = [...]string{`"modality"`, `"tokenCount"`}
)

// fastChunk reads data in full into d.c and d.fastParts if it has the
// common shape, and makes it the template; it returns the number of parts
// and false when it declines (d.c and d.sd.buf may then hold anything;
// readChunk resets them). Decode tries the replay first: fastChunk is for
// a chunk the replay declined.
func (d *StreamDecoder) fastChunk(data []byte) (int, bool) {
	t := &d.tmpl
	d.c = wireChunk{}
	s := fastScan{parser: parser{b: data}, sd: &d.sd, c: &d.c, parts: d.fastParts[:0], holes: t.holeBuf[:0]}
	if !s.chunk() {
		t.b = t.b[:0]
		return 0, false
	}
	if s.tooMany || len(data) > maxTemplate { // (which also keeps offsets in an int32)
		t.b = t.b[:0]
	} else {
		t.b = append(t.b[:0], data...)
		t.holes = s.holes
		for k := range t.holes {
			h := &t.holes[k]
			switch h.kind {
			case holeOther, holeModel, holeResponseID:
				h.fixed = bytes.IndexByte(data[h.at:h.end], '\\') < 0
			}
		}
		t.parts, t.learnt = len(s.parts), false
		t.compile()
		// The values a replay leaves are the template's, in t.b: the chunk's
		// own bytes may not outlive it.
		if t.model != "" {
			d.c.ModelVersion = t.model
		}
		if t.id != "" {
			d.c.ResponseID = t.id
		}
	}
	return len(s.parts), true
}

// replay reads data as the template filled with other values, step by
// step: the template's bytes up to a value compared with data's, the value
// read from data. A count is read as one of as many digits as the
// template's (a count of another length is read in full by fastChunk,
// which makes that chunk the template). Only the values are set: d.c and
// d.fastParts hold the last chunk's, which was the template or a replay
// of it (any other chunk drops the template), so everything else in them
// is what the template says (its fixed model and id are the template's
// bytes, fastChunk sees to that).
func (d *StreamDecoder) replay(data []byte) (int, bool) {
	t := &d.tmpl
	if len(t.b) == 0 {
		return 0, false
	}
	c := &d.c // the template's values, or the last replay's: the holes are set
	i, ci := 0, 0
	for k := range t.steps {
		st := &t.steps[k]
		n := len(st.lit)
		if len(data)-i < n {
			return 0, false
		}
		for ; ci < int(st.counts); ci++ {
			ch := &t.counts[ci]
			if !t.learnt {
				t.at[ci] = int32(i) + ch.off // (for fixCounts)
			}
			if !ch.word {
				v, ok := ch.read(data[i:i+n], st.lit)
				if !ok {
					return 0, false
				}
				c.Usage.set(ch.kind, v)
				continue
			}
			// (Inline, most counts: the word that ends with it.)
			at := i + int(ch.off+ch.vlen) - 8
			w := rawjson.Word(data, at) & ch.mask
			binary.LittleEndian.PutUint64(st.lit[at-i:], ch.keep|w)
			digits, ok := wordDigits(w, ch.vlen)
			if !ok {
				return 0, false
			}
			if ch.kind != holeCount { // (a count dropped needs only checking)
				c.Usage.set(ch.kind, sumDigits8(digits))
			}
		}
		if !rawjson.Equal(data[i:i+n], st.lit) {
			return 0, false
		}
		i += n
		switch st.kind {
		case holeNone:
			if !t.learnt && i == len(data) {
				t.fixCounts(data)
			}
			return t.parts, i == len(data)
		default:
			p := parser{b: data, i: i}
			v, plain, ok := p.text(&d.sd)
			if !ok {
				return 0, false
			}
			i = p.i
			if st.kind == holeText { // (most chunks' one string)
				d.fastParts[st.part].text, d.fastParts[st.part].plain = v, plain
			} else {
				d.setString(st, v)
			}
		}
	}
	return 0, false // (the last step returns)
}

// read reads the count, not a word one, from b, a chunk's bytes where a
// step's lit lies, and copies it into lit: what countOfLen reads, the
// byte after it checked by the step's comparison. (The replay reads a word
// count itself: the word that ends with it, its digits copied into lit's
// word in one store.)
func (c *countHole) read(b, lit []byte) (int, bool) {
	at := int(c.off)
	copy(lit[at:at+int(c.vlen)], b[at:])
	return countOfLen(b, at, int(c.vlen))
}

// setString puts the string value v of a replay's step, not a text, where
// it goes.
func (d *StreamDecoder) setString(st *step, v string) {
	switch st.kind {
	case holeSig:
		d.fastParts[st.part].sig = unwrapSignature(v)
	case holeModel:
		d.c.ModelVersion = v
	case holeResponseID:
		d.c.ResponseID = v
	case holeFinish:
		d.c.FinishReason = v
	}
}

// set sets the count of kind (holeCount: one that is dropped).
func (u *wireUsage) set(kind holeKind, n int) {
	switch kind {
	case holePrompt:
		u.PromptTokenCount = n
	case holeCandidates:
		u.CandidatesTokenCount = n
	case holeThoughts:
		u.ThoughtsTokenCount = n
	case holeCached:
		u.CachedContentTokenCount = n
	case holeToolUse:
		u.ToolUsePromptTokenCount = n
	}
}

// fixCounts makes the counts that data, the template's first replay, has
// the same as the template fixed, and compiles the replay again: most
// counts of a stream stay (the prompt's tokens, the index, a modality's),
// and a fixed one costs its part of a comparison rather than a step.
func (t *template) fixCounts(data []byte) {
	t.learnt = true
	fixed := false
	for k, c := range t.counts {
		h := &t.holes[c.hole]
		if at := int(t.at[k]); string(data[at:at+int(c.vlen)]) == string(t.b[h.at:h.end]) {
			h.fixed, fixed = true, true
		}
	}
	if fixed {
		t.compile()
	}
}

// countOfLen reads the count of n digits at b[i] (1 ≤ n ≤ 15: a count the
// template held), one digit at a time: what readCount reads when the byte
// after them ends the number, which the replay's next comparison checks.
// (The replay reads a count of up to 8 digits, 8 bytes or more into its
// step, with wordDigits.)
func countOfLen(b []byte, i, n int) (v int, ok bool) {
	if len(b)-i < n || n > 1 && b[i] == '0' {
		return 0, false
	}
	for _, c := range b[i : i+n] {
		if c -= '0'; c > 9 {
			return 0, false
		}
		v = v*10 + int(c)
	}
	return v, true
}

// digitsMask keeps the last n bytes of a word (little-endian).
var digitsMask = func() (mask [9]uint64) {
	for n := range 9 {
		mask[n] = ^uint64(0) << (64 - 8*n)
	}
	return mask
}()

// wordDigits checks the count of n digits (1 ≤ n ≤ 8) in the last n
// bytes of w, little-endian, its other bytes zero, as readCount reads one
// whose next byte ends the number: all digits, no leading zero. It tests
// them at once (a high nibble of 3, a low one that adding 6 does not
// carry), and returns w with the other bytes made '0', for sumDigits8 (a
// count the replay drops is only checked).
func wordDigits(w uint64, n int32) (uint64, bool) {
	const zeros, highs = 0x3030303030303030, 0xf0f0f0f0f0f0f0f0
	cw := &countWords[n]
	w |= cw.fill
	if w&highs != zeros || (w+0x0606060606060606)&highs != zeros || w&cw.first == cw.zeroFirst {
		return w, false
	}
	return w, true
}

// countWords[n] is, for a count of n digits that ends a word, the bytes
// that make the others '0' (fill), and its first digit's byte (first) and
// what that byte must not be, a zero (zeroFirst; for one digit it cannot
// be, nothing is excluded).
var countWords = func() (t [9]struct{ fill, first, zeroFirst uint64 }) {
	for n := 1; n <= 8; n++ {
		shift := 64 - 8*n
		t[n].fill = 0x3030303030303030 &^ digitsMask[n]
		t[n].first, t[n].zeroFirst = 0xff<<shift, '0'<<shift
	}
	t[1].first, t[1].zeroFirst = 0, 1
	return t
}()

// sumDigits8 reads the 8 digits of w, little-endian (wordDigits), in three
// multiplications: pairs of digits, then pairs of those, then of fours.
func sumDigits8(w uint64) int {
	w -= 0x3030303030303030
	w = (w*10 + w>>8) & 0x00ff00ff00ff00ff
	w = (w*100 + w>>16) & 0x0000ffff0000ffff
	return int((w*10000 + w>>32) & 0xffffffff)
}

func (s *fastScan) decline() bool {
	s.fail()
	return false
}

// eat moves past c after optional whitespace.
func (s *fastScan) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads the key at the cursor (after whitespace) and the colon after
// it, and returns its index in keys; -1 when it is none of them.
func (s *fastScan) key(keys []string) int {
	s.ws()
	b := s.b[s.i:]
	if len(b) < 3 || b[0] != '"' {
		return -1
	}
	for k, name := range keys {
		if name[1] == b[1] && len(b) >= len(name) && string(b[:len(name)]) == name {
			s.i += len(name)
			if !s.eat(':') {
				return -1
			}
			s.ws()
			return k
		}
	}
	return -1
}

// object reads the members of an object (the cursor at its brace), calling
// member with the index in keys of each key; it declines unknown and
// duplicate keys.
func (s *fastScan) object(keys []string, member func(k int) bool) bool {
	if !s.eat('{') {
		return s.decline()
	}
	if s.eat('}') {
		return true
	}
	seen := 0
	for {
		k := s.key(keys)
		if k < 0 || seen&(1<<k) != 0 {
			return s.decline()
		}
		seen |= 1 << k
		if !member(k) || s.err {
			return s.decline()
		}
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return true
		}
		return s.decline()
	}
}

// array reads the elements of an array (the cursor at its bracket).
func (s *fastScan) array(elem func() bool) bool {
	if !s.eat('[') {
		return s.decline()
	}
	if s.eat(']') {
		return true
	}
	for {
		if !elem() || s.err {
			return s.decline()
		}
		if s.eat(',') {
			continue
		}
		if s.eat(']') {
			return true
		}
		return s.decline()
	}
}

// string reads a string value (not null) into dst, and notes it as a hole
// of the template.
func (s *fastScan) string(dst *string, kind holeKind) bool {
	at := s.i
	v, plain, ok := s.text(s.sd)
	if !ok {
		return s.decline()
	}
	*dst, s.plain = v, plain
	s.hole(at, kind)
	return true
}

// count reads a count (fastCount) into dst, and notes it as a hole of the
// template.
func (s *fastScan) count(dst *int, kind holeKind) bool {
	at := s.i
	n, ok := fastCount(&s.parser)
	if !ok {
		return s.decline()
	}
	*dst = n
	s.hole(at, kind)
	return true
}

// hole notes the value just read, from at to the cursor.
func (s *fastScan) hole(at int, kind holeKind) {
	if len(s.holes) == cap(s.holes) {
		s.tooMany = true
		return
	}
	s.holes = append(s.holes, hole{at: int32(at), end: int32(s.i), kind: kind, part: uint8(len(s.parts))})
}

// fastCount reads a count (readCount) at the cursor.
func fastCount(p *parser) (int, bool) {
	n, end := readCount(p.b, p.i)
	if end < 0 {
		return 0, false
	}
	p.i = end
	return n, true
}

// readCount reads the non-negative integer of at most 15 digits at b[i],
// with no fraction or exponent, followed by a byte that cannot continue a
// number: a value parser.int reads the same. It returns the offset past
// it, or -1.
func readCount(b []byte, i int) (n, end int) {
	if n, end = rawjson.Count(b, i); end < 0 || end-i > 15 {
		return 0, -1
	}
	if end < len(b) {
		if c := b[end]; c == '.' || c == 'e' || c == 'E' || '0' <= c && c <= '9' {
			return 0, -1
		}
	}
	return n, end
}

func (s *fastScan) chunk() bool {
	c := s.c
	ok := s.object(fastTopKeys[:], func(k int) bool {
		switch k {
		case 0:
			return s.array(func() bool {
				if c.Candidate {
					return false // a second candidate
				}
				c.Candidate = true
				return s.candidate()
			})
		case 1:
			c.HasUsage = true
			return s.usage()
		case 2:
			return s.string(&c.ModelVersion, holeModel)
		default:
			return s.string(&c.ResponseID, holeResponseID)
		}
	})
	s.ws()
	return ok && !s.err && s.i == len(s.b)
}

func (s *fastScan) candidate() bool {
	c := s.c
	return s.object(fastCandidateKeys[:], func(k int) bool {
		switch k {
		case 0:
			return s.object(fastContentKeys[:], func(k int) bool {
				if k == 1 {
					var role string
					return s.string(&role, holeOther)
				}
				return s.array(s.part)
			})
		case 1:
			return s.string(&c.FinishReason, holeFinish)
		default:
			var index int
			return s.count(&index, holeCount)
		}
	})
}

func (s *fastScan) part() bool {
	if len(s.parts) == maxFastParts {
		return false
	}
	var fp fastPart
	ok := s.object(fastPartKeys[:], func(k int) bool {
		switch k {
		case 0:
			ok := s.string(&fp.text, holeText)
			fp.plain = s.plain
			return ok
		case 1:
			if !s.string(&fp.sig, holeSig) {
				return false
			}
			fp.sig = unwrapSignature(fp.sig)
			return true
		default:
			switch {
			case s.lit("true"):
				fp.thought = true
			case s.lit("false"):
			default:
				return false
			}
			return true
		}
	})
	s.parts = append(s.parts, fp)
	return ok
}

// lit moves past w if the input continues with it.
func (s *fastScan) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

func (s *fastScan) usage() bool {
	u := &s.c.Usage
	return s.object(fastUsageKeys[:], func(k int) bool {
		var total int
		switch k {
		case 0:
			return s.count(&u.PromptTokenCount, holePrompt)
		case 1:
			return s.count(&u.CandidatesTokenCount, holeCandidates)
		case 2:
			return s.count(&total, holeCount)
		case 3:
			return s.count(&u.ThoughtsTokenCount, holeThoughts)
		case 4:
			return s.count(&u.CachedContentTokenCount, holeCached)
		case 5:
			return s.count(&u.ToolUsePromptTokenCount, holeToolUse)
		default: // token details by modality
			return s.array(s.detail)
		}
	})
}

func (s *fastScan) detail() bool {
	return s.object(fastDetailKeys[:], func(k int) bool {
		if k == 0 {
			var modality string
			return s.string(&modality, holeOther)
		}
		var n int
		return s.count(&n, holeCount)
	})
}
