package proxy

import (
	"encoding/binary"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/dialects"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/responses"
)

// dialect is a style the gateway speaks (its codec.Dialect), with what the
// proxy keeps of it: pools of its stream state machines and its HTTP facts
// as bytes.
type dialect struct {
	codec.Dialect
	http *codec.HTTP
	// authHeader is the name of the upstream's credential header, spelled
	// as fasthttp normalizes it, so that it is set without normalizing
	// again at every request (SetCanonical).
	authHeader []byte
	// versionHeader is the name of the API version header as fasthttp
	// normalizes it; empty for a style without versions.
	versionHeader []byte
	// requestID is the name of the header of the upstream's id for its
	// answer (http.RequestIDHeader), to find in any case; empty when the
	// style names none.
	requestID          foldedName
	decoders, encoders sync.Pool
	// passed are the headers of an answer a client of the style gets
	// from an upstream of its style (see passSameStyle): its request id,
	// under strUpstreamRequestID, and the others as they are; by a hash of
	// their names (passSlot), so that most of an answer's headers are
	// passed over at one look, and the others compared with one name.
	passed [passSlots]*passedHeader
}

// passedHeader is the name of an upstream's header to find (folded, and
// as words), the name a client gets it under, as fasthttp spells it once
// read (as bytes, to be set without a conversion), whether it tells of a
// quota, its bit, one of a dialect's own, and the next name of its slot.
type passedHeader struct {
	folded    foldedName
	words     foldedWords
	canonical []byte
	quota     bool
	bit       uint64
	next      *passedHeader
}

// foldedName is a header name to find in any case, eight bytes at a time:
// lower is the name with its letters in lower case, and mask has 0x20
// where a letter is, so that a name k is it when k|mask is lower, word by
// word (exactly: only a letter's two cases become the same byte).
type foldedName struct{ lower, mask []byte }

func foldName(name string) foldedName {
	return foldInto(make([]byte, 0, len(name)), make([]byte, 0, len(name)), name)
}

// foldInto is foldName appending to lower and mask, which may be a
// caller's arrays on its stack.
func foldInto(lower, mask []byte, name string) foldedName {
	for i := range len(name) {
		c, m := name[i], byte(0)
		if l := c | 0x20; 'a' <= l && l <= 'z' {
			c, m = l, 0x20
		}
		lower, mask = append(lower, c), append(mask, m)
	}
	return foldedName{lower, mask}
}

// findHeader returns the value of h's header named f, in any case; nil
// when there is none, or f is empty.
func findHeader(h *fasthttp.ResponseHeader, f *foldedName) []byte {
	if len(f.lower) == 0 {
		return nil
	}
	return findPair(h, f.lower[0], f.matches)
}

// matches reports whether the header name k is f's, in any case.
func (f *foldedName) matches(k []byte) bool {
	n := len(k)
	if n != len(f.lower) || n > len(f.mask) {
		return false
	}
	l, m := f.lower[:n], f.mask[:n]
	if n < 8 {
		for i := range n {
			if k[i]|m[i] != l[i] {
				return false
			}
		}
		return true
	}
	// Eight bytes at a time, the last eight as one word whatever the
	// length, overlapping the word before them where a byte loop took
	// the rest.
	for i := 0; i < n-8; i += 8 {
		if word(k, i)|word(m, i) != word(l, i) {
			return false
		}
	}
	return word(k, n-8)|word(m, n-8) == word(l, n-8)
}

// word is the eight bytes of b from i.
func word(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

func newDialect(d codec.Dialect) *dialect {
	s := &dialect{Dialect: d, http: d.HTTP(), authHeader: fasthttp.AppendNormalizedHeaderKey(nil, d.HTTP().AuthHeader),
		requestID: foldName(d.HTTP().RequestIDHeader)}
	if v := s.http.VersionHeader; v != "" {
		s.versionHeader = fasthttp.AppendNormalizedHeaderKey(nil, v)
	}
	n := 0
	passAs := func(name string, as []byte, quota bool) {
		if n == 64 {
			panic("BUG: a dialect passes more than 64 headers")
		}
		slot := &s.passed[passSlot([]byte(name))]
		f := foldName(name)
		*slot = &passedHeader{folded: f, words: foldWords(f), canonical: as, quota: quota, bit: 1 << n, next: *slot}
		n++
	}
	pass := func(name string, quota bool) { passAs(name, []byte(name), quota) }
	if id := s.http.RequestIDHeader; id != "" {
		passAs(id, strUpstreamRequestID, false)
	}
	for _, name := range s.http.PassedHeaders {
		pass(name, false)
	}
	if q := s.http.Quota; q != nil {
		for _, names := range q.Names {
			for _, name := range names {
				pass(name, true)
			}
		}
	}
	s.decoders.New = func() any { return d.NewStreamDecoder() }
	s.encoders.New = func() any { return d.NewStreamEncoder() }
	return s
}

// registry maps a channel type to the dialect its channels speak: every
// style of codec/dialects under its own name, and the demo channel, a
// simulated OpenAI-compatible model.
var registry = func() map[string]*dialect {
	r := make(map[string]*dialect, len(dialects.All)+1)
	for _, d := range dialects.All {
		r[d.Name()] = newDialect(d)
	}
	r["demo"] = r[dialects.All[0].Name()]
	return r
}()

// The client styles, by the endpoints the gateway serves for each.
var (
	styleOpenAI    = registry[openai.Dialect.Name()]
	styleAnthropic = registry[anthropic.Dialect.Name()]
	styleGemini    = registry[gemini.Dialect.Name()]
	// styleResponses is OpenAI's Responses API as a client style: no
	// channel type speaks it, so its requests are always translated.
	styleResponses = newDialect(responses.Dialect)
)

// styleOf is the dialect a channel of a configured type speaks.
func styleOf(channelType string) *dialect {
	if d := registry[channelType]; d != nil {
		return d
	}
	return styleOpenAI
}

// ChannelTypes lists the channel types a configuration or the console may
// name, in a stable order.
func ChannelTypes() []string { return append(dialects.Names(), "demo") }

func (s *dialect) String() string { return s.Name() }

// passSlots is the size of a dialect's table of passed headers: a power
// of two, many times the most names a style passes (8).
const passSlots = 128

// passSlot is the index in passed of the name k, in any case: a hash of
// its length and of two of its bytes, case folded (a non-letter may fold
// with another, which the comparison then tells apart). The bytes are
// where the styles' names of one length differ: OpenAI's
// x-ratelimit-limit-tokens and x-ratelimit-reset-tokens in the middle,
// Anthropic's anthropic-ratelimit-tokens-limit and -reset near the end
// (TestPassedHeaderSlots holds every style's names to slots of their own).
func passSlot(k []byte) uint {
	n := uint(len(k))
	if n < 3 {
		return n
	}
	return (n*5 + uint(k[n/2]|0x20)*3 + uint(k[n-3]|0x20)) % passSlots
}

// passes returns how a client of the style gets the header named k (in
// any case) of an upstream of its own style, or nil when it does not.
func (s *dialect) passes(k []byte) *passedHeader {
	return s.passed[passSlot(k)].find(k)
}

// find returns the header named k among p and the names after it in its
// slot, nil when none is.
func (p *passedHeader) find(k []byte) *passedHeader {
	for ; p != nil; p = p.next {
		if p.words.matches(k, &p.folded) {
			return p
		}
	}
	return nil
}

// foldedWords is a foldedName of 8 to 40 bytes as the words matches
// compares, made once: those at 0, 8, 16... before the last eight bytes,
// and the last eight, lower and mask; n is 0 for a name of another length.
type foldedWords struct {
	n           int
	lower, mask [5]uint64
}

func foldWords(f foldedName) foldedWords {
	n := len(f.lower)
	if n < 8 || n > 40 {
		return foldedWords{}
	}
	w := foldedWords{n: n}
	j := 0
	for i := 0; i < n-8; i += 8 {
		w.lower[j], w.mask[j] = word(f.lower, i), word(f.mask, i)
		j++
	}
	w.lower[4], w.mask[4] = word(f.lower, n-8), word(f.mask, n-8)
	return w
}

// matches is f.matches(k) for the name w was made of, f, with its words
// ready.
func (w *foldedWords) matches(k []byte, f *foldedName) bool {
	n := len(k)
	if w.n == 0 {
		return f.matches(k)
	}
	if n != w.n || word(k, n-8)|w.mask[4] != w.lower[4] {
		return false
	}
	for i, j := 0, 0; i < n-8; i, j = i+8, j+1 {
		if word(k, i)|w.mask[j] != w.lower[j] {
			return false
		}
	}
	return true
}
