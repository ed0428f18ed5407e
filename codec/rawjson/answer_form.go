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

// A literal is bytes Read compares in place, held as the words it
// compares: its words but for its last 8 bytes (words), and those (tail,
// at last); a literal of fewer than 8 bytes is its bytes in tail, the
// rest of the word masked off.
type literal struct {
	s     string
	words []uint64
	tail  uint64
	mask  uint64
	last  int // the offset of tail
	least int // the bytes at compares, at least: 8, or the literal's length
}

func newLiteral(s string) literal {
	l := literal{s: s, mask: ^uint64(0), least: max(len(s), 8)}
	b := []byte(s)
	if len(b) < 8 {
		l.mask >>= 8 * (8 - len(b))
		l.tail = word(append(b, make([]byte, 8-len(b))...), 0)
		return l
	}
	for j := 0; j+8 < len(b); j += 8 {
		l.words = append(l.words, word(b, j))
	}
	l.last = len(b) - 8
	l.tail = word(b, l.last)
	return l
}

// at reports whether b[i:] starts with l.
func (l *literal) at(b []byte, i int) bool {
	if len(b)-i < l.least {
		return l.atEnd(b, i)
	}
	j := i
	for _, w := range l.words {
		if word(b, j) != w {
			return false
		}
		j += 8
	}
	return word(b, i+l.last)&l.mask == l.tail
}

// atEnd is at where fewer than 8 bytes follow b[i].
func (l *literal) atEnd(b []byte, i int) bool {
	return len(b)-i >= len(l.s) && string(b[i:i+len(l.s)]) == l.s
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
// The layout of the first literal met whole is tried first for the others.
func (f *Form) Read(b []byte, i int, counts []int) (end int) {
	last, layout := len(f.lits)-1, compact
	if i < len(b) && b[i] <= ' ' {
		i = SkipSpace(b, i)
	}
	for n := range f.lits {
		lit := &f.lits[n]
		switch {
		case lit.layouts[layout].at(b, i):
			i += len(lit.layouts[layout].s)
		case lit.layouts[indented-layout].at(b, i):
			layout = indented - layout
			i += len(lit.layouts[layout].s)
		default:
			if !lit.mayBeSpaced(b, i) {
				return -1
			}
			if i = lit.spaced(b, i); i < 0 {
				return -1
			}
		}
		if n == last {
			return i
		}
		if i < len(b) && b[i] <= ' ' {
			i = SkipSpace(b, i)
		}
		c, j := Count(b, i)
		if j < 0 {
			return -1
		}
		counts[n], i = c, j
	}
	return i
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
