package rawjson

import "strings"

// A Form is a JSON object as a reader expects an upstream to write it,
// but for its counts: an answer's usage object, which OpenAI writes with
// the same keys in the same order in every answer. Read compares an object
// with it in place and reads its counts: where it matches, the object is
// one that a walk member by member (Object) would check and read alike,
// at a fraction of the cost; where it does not, the caller walks it.
//
// The form's literals (what stands between two counts) are compared whole
// in its layouts, compact and indented as OpenAI indents its answers, and
// where neither is met a token at a time (a brace, a comma, a key with its
// colon), any JSON whitespace between two tokens but for between a key
// and its colon.
type Form struct {
	lits  []formLiteral // the literals between the counts, the first before the first count
	paths []string      // the keys to each count, in order, joined by "\x00"
}

// A formLiteral is what a Form has between two counts (or before the
// first, or after the last): whole in each layout, and as its tokens.
type formLiteral struct {
	layouts [layouts]literal
	tokens  []literal
}

// The layouts a Form's literals are compared in whole.
const (
	compact  = iota
	indented // OpenAI's: two spaces a level, a space after a colon
	layouts
)

// A literal is bytes Read compares in place a word at a time, the words'
// differences or-ed rather than tested one by one: its words up to its
// last 8 bytes, and those (at last); a literal of fewer than 8 bytes in
// one word, the bytes past it masked off.
type literal struct {
	s     string
	words []byte // s, and zeros after it up to 8 bytes: the words compared
	mask  uint64
	last  int // the offset of the last word compared
	least int // the bytes at compares, at least: 8, or the literal's length
}

func newLiteral(s string) literal {
	l := literal{s: s, mask: ^uint64(0), least: max(len(s), 8), last: max(len(s)-8, 0)}
	l.words = append([]byte(s), make([]byte, l.least-len(s))...)
	l.mask >>= 8 * (l.least - len(s))
	return l
}

// at reports whether b[i:] starts with l.
func (l *literal) at(b []byte, i int) bool {
	if len(b)-i < l.least {
		return l.atEnd(b, i)
	}
	return l.within(b, i)
}

// within is at where l.least bytes follow b[i].
func (l *literal) within(b []byte, i int) bool {
	diff := (word(b, i+l.last) ^ word(l.words, l.last)) & l.mask
	for j := 0; j < l.last; j += 8 {
		diff |= word(b, i+j) ^ word(l.words, j)
	}
	return diff == 0
}

// atEnd is at where fewer than l.least bytes follow b[i].
func (l *literal) atEnd(b []byte, i int) bool {
	if len(b) >= 8 {
		return l.atLast(b, i)
	}
	return len(b)-i >= len(l.s) && string(b[i:i+len(l.s)]) == l.s
}

// atLast is at where fewer than l.least bytes follow b[i] and b has 8 or
// more: the word b ends with, shifted to start at b[i], holds all a
// literal of fewer than 8 bytes can match (a usage's closing braces at
// the end of a usage alone), without a call of memequal.
func (l *literal) atLast(b []byte, i int) bool {
	n := len(b) - i
	return n >= len(l.s) && (word(b, len(b)-8)>>((64-8*n)&63)^word(l.words, 0))&l.mask == 0
}

// NewForm is the Form of template, a JSON object without whitespace or
// escapes, no key named twice in one object, whose values are objects or
// counts, each spelled #:
//
//	{"prompt_tokens":#,"prompt_tokens_details":{"cached_tokens":#}}
//
// depth is where the form's object nests in the documents it is read
// from, as Object's depth (a member of the top-level object is at 2),
// which sets its indent in the indented layout. It is made once, when its
// reader's package starts.
func NewForm(template string, depth int) *Form {
	if b := []byte(strings.ReplaceAll(template, "#", "0")); !Valid(b) || Repeats(b) || KindOf(b) != KindObject ||
		strings.ContainsAny(template, " \t\r\n\\[") {
		panic("rawjson.NewForm: no object of counts and objects, without whitespace nor escapes, that names a key once: " + template)
	}
	f := new(Form)
	var path []string
	var whole [layouts]string
	var tokens []literal
	level := depth - 1 // the depth of the object the template is in
	indent := func(level int) string { return "\n" + strings.Repeat("  ", level) }
	for t, prev := template, byte(0); t != ""; {
		token, before, after := t[:1], "", ""
		switch t[0] {
		case '{':
			if level++; t[1] != '}' {
				after = indent(level)
			}
		case ',':
			after = indent(level)
		case '}':
			if prev != '{' {
				before = indent(level - 1)
			}
			level--
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
		case '#':
			f.lits = append(f.lits, newFormLiteral(whole, tokens))
			whole, tokens = [layouts]string{}, nil
			f.paths = append(f.paths, strings.Join(path, "\x00"))
			path = path[:len(path)-1]
			prev, t = t[0], t[1:]
			continue
		case '"': // a key, with its colon: whitespace may not stand between them here
			end := strings.Index(t[1:], `"`)
			if end+3 >= len(t) || t[end+2] != ':' || t[end+3] != '#' && t[end+3] != '{' {
				panic("rawjson.NewForm: a value that is neither a count nor an object: " + t)
			}
			path = append(path, t[1:1+end])
			token, after = t[:end+3], " "
		}
		whole[compact] += token
		whole[indented] += before + token + after
		tokens = append(tokens, newLiteral(token))
		prev, t = t[0], t[len(token):]
	}
	f.lits = append(f.lits, newFormLiteral(whole, tokens))
	return f
}

func newFormLiteral(whole [layouts]string, tokens []literal) formLiteral {
	l := formLiteral{tokens: tokens}
	for i, s := range whole {
		l.layouts[i] = newLiteral(s)
	}
	return l
}

// Count is the index among Read's counts of the count at the end of the
// keys path (the usage's "prompt_tokens_details", "cached_tokens"), or -1
// when the form has none there.
func (f *Form) Count(path ...string) int {
	p := strings.Join(path, "\x00")
	for i := range f.paths {
		if f.paths[i] == p {
			return i
		}
	}
	return -1
}

// Counts is the number of the form's counts.
func (f *Form) Counts() int { return len(f.paths) }

// Read reports whether the JSON at b[i] (whitespace before it allowed)
// starts with an object of the form f: end is the offset just past it,
// -1 when it does not match. The object is then valid JSON, its keys are
// spelled without escapes and named once in each object, and counts,
// which must hold f.Counts(), holds its counts (rawjson.Count's integers).
//
// The compact layout, the one answers are relayed in, is tried first in a
// loop of its own, its counts of up to 7 digits read from one word; from
// the first literal it does not meet, readFrom reads the rest. A literal's
// layouts, where they differ, differ in their first two bytes (an indented
// one has whitespace after its brace or comma, or before its closing
// brace): at most one of them matches, in whichever order they are tried,
// and an object with whitespace after its brace is not compact.
func (f *Form) Read(b []byte, i int, counts []int) (end int) {
	if i < len(b) && b[i] <= ' ' {
		i = SkipSpace(b, i)
	}
	if i+1 < len(b) && b[i+1] <= ' ' {
		return readFrom(f.lits, b, i, counts) // an object indented: no compact literal has whitespace
	}
	for n, lits := 0, f.lits; ; n, lits = n+1, lits[1:] {
		lit := &lits[0].layouts[compact]
		if len(b)-i >= lit.least && !lit.within(b, i) ||
			len(b)-i < lit.least && (len(b) < 8 || !lit.atLast(b, i)) {
			return readFrom(lits, b, i, counts[n:])
		}
		if i += len(lit.s); len(lits) == 1 {
			return i
		}
		c, j := 0, i+1 // a 0
		if i >= len(b) || b[i] != '0' {
			if j = shortInteger(b, i); j > i {
				c = smallValue(word(b, i), j-i)
			} else if c, j = spacedCount(b, i); j < 0 {
				return -1
			}
		}
		counts[n], i = c, j
	}
}

// readFrom is Read from the literal lits[0] at b[i] on, which Read found
// not compact, counts[0] its first count: each literal in the layout of
// the last met whole, else in the other (but for the first, not compact),
// else a token at a time. Where lits[0] does not depart from its compact
// layout at whitespace, neither layout nor spaced can match it.
func readFrom(lits []formLiteral, b []byte, i int, counts []int) (end int) {
	if !lits[0].mayBeSpaced(b, i) {
		return -1 // nor indented, which departs from compact at whitespace
	}
	layout := indented
	for n := range lits {
		lit := &lits[n]
		switch {
		case lit.layouts[layout].at(b, i):
			i += len(lit.layouts[layout].s)
		case n > 0 && lit.layouts[indented-layout].at(b, i):
			layout = indented - layout
			i += len(lit.layouts[layout].s)
		default:
			if n > 0 && !lit.mayBeSpaced(b, i) { // lits[0]'s was asked above
				return -1
			}
			if i = lit.spaced(b, i); i < 0 {
				return -1
			}
		}
		if n == len(lits)-1 {
			break
		}
		if i < len(b) && b[i] <= ' ' {
			i = SkipSpace(b, i) // spacedCount, inlined where every count is read
		}
		c, j := Count(b, i)
		if j < 0 {
			return -1
		}
		counts[n], i = c, j
	}
	return i
}

// spacedCount is Count with whitespace before the count allowed: Read's
// where a count does not follow its literal at once.
func spacedCount(b []byte, i int) (n, end int) {
	if i < len(b) && b[i] <= ' ' {
		i = SkipSpace(b, i)
	}
	return Count(b, i)
}

// smallValue is the value of the decimal digits in the first digits (1 to
// 7) bytes of w, the first the most significant: the digits moved to the
// word's top (zeros before them) and summed in pairs, quads and halves.
func smallValue(w uint64, digits int) int {
	w = w << ((64 - 8*digits) & 63) & 0x0f0f0f0f0f0f0f0f // & 63: no test of a shift past the word
	w = w * (10<<8 + 1) >> 8 & 0x00ff00ff00ff00ff
	w = w * (100<<16 + 1) >> 16 & 0x0000ffff0000ffff
	return int(w * (10000<<32 + 1) >> 32)
}

// mayBeSpaced reports whether b[i:], which starts with neither of l's
// layouts, may match l a token at a time: only if where it departs from l
// compact it has whitespace, the one thing spaced takes there that the
// compact literal does not (a token's bytes must match exactly). A usage
// of other keys than the form's (an embeddings answer's, a server's own
// order) so fails at the cost of finding where, not of spaced.
func (l *formLiteral) mayBeSpaced(b []byte, i int) bool {
	s := l.layouts[compact].s
	n := 0
	for n < len(s) && i+n < len(b) && b[i+n] == s[n] {
		n++
	}
	if i+n >= len(b) {
		return false // spaced needs more bytes than b has
	}
	switch b[i+n] {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return n == len(s)
}

// spaced is Read's comparison of the literal l with b[i:] a token at a
// time, whitespace allowed before each: the offset just past it, or -1.
func (l *formLiteral) spaced(b []byte, i int) int {
	for t := range l.tokens {
		if i < len(b) && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		if !l.tokens[t].at(b, i) {
			return -1
		}
		i += len(l.tokens[t].s)
	}
	return i
}
