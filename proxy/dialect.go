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
	// passedLens has bit n set when a passed name is n bytes long (n <
	// 64; bit 63 for every longer one too): an answer's header of another
	// length is passed over at one test, before its slot is looked at.
	passedLens uint64
}

// passedHeader is the name of an upstream's header to find (folded), the
// name a client gets it under, as fasthttp spells it once read (as bytes,
// to be set without a conversion), whether it tells of a quota, its bit,
// one of a dialect's own, and the next name of its slot.
type passedHeader struct {
	folded    foldedName
	canonical []byte
	quota     bool
	bit       uint64
	next      *passedHeader
}

// foldedName is a header name to find in any case, eight bytes at a time:
// lower is the name with its letters in lower case, and mask has 0x20
// where a letter is, as little-endian words, so that a name k is it when
// k|mask is lower, word by word (exactly: only a letter's two cases become
// the same byte). Made once, so each comparison loads only k: the words
// are those at 0, 8, 16... before the name's last eight bytes, and the
// last eight (at lastWord), overlapping the one before them; a name of
// fewer than eight bytes is one word, its bytes and zeros.
type foldedName struct {
	n           int
	lower, mask [maxFolded / 8]uint64
}

// maxFolded is the longest name a foldedName holds: well over the
// codec's longest (38 bytes, Anthropic-Ratelimit-Requests-Remaining).
const maxFolded = 64

func foldName(name string) foldedName {
	n := len(name)
	if n > maxFolded {
		panic("BUG: a header name of more than 64 bytes to find: " + name)
	}
	var lower, mask [maxFolded]byte
	for i := range n {
		c, m := name[i], byte(0)
		if l := c | 0x20; 'a' <= l && l <= 'z' {
			c, m = l, 0x20
		}
		lower[i], mask[i] = c, m
	}
	f := foldedName{n: n}
	if n < 8 {
		f.lower[0], f.mask[0] = word(lower[:], 0), word(mask[:], 0)
		return f
	}
	for i, j := 0, 0; i < n-8; i, j = i+8, j+1 {
		f.lower[j], f.mask[j] = word(lower[:], i), word(mask[:], i)
	}
	f.lower[lastWord], f.mask[lastWord] = word(lower[:], n-8), word(mask[:], n-8)
	return f
}

// lastWord is where a foldedName of eight bytes or more keeps its last
// word: at a constant place, so that matches compares it first with no
// arithmetic.
const lastWord = maxFolded/8 - 1

// findHeader returns the value of h's header named f, in any case; nil
// when there is none, or f is empty.
func findHeader(h *fasthttp.ResponseHeader, f *foldedName) []byte {
	if f.n == 0 {
		return nil
	}
	return findPair(h, byte(f.lower[0]), f.matches)
}

// matches reports whether the header name k is f's, in any case.
func (f *foldedName) matches(k []byte) bool {
	n := len(k)
	if n != f.n {
		return false
	}
	if n < 8 {
		var w uint64
		for i := range n {
			w |= uint64(k[i]) << (8 * i)
		}
		return w|f.mask[0] == f.lower[0]
	}
	if word(k, n-8)|f.mask[lastWord] != f.lower[lastWord] {
		return false
	}
	for i, j := 0, 0; i < n-8; i, j = i+8, j+1 {
		if word(k, i)|f.mask[j] != f.lower[j] {
			return false
		}
	}
	return true
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
		if (*slot).find([]byte(name)) != nil {
			// The one found would shadow or be shadowed by the other:
			// one of them would never be passed as it says.
			panic("BUG: dialect " + d.Name() + " passes the header " + name + " twice (in any case)")
		}
		f := foldName(name)
		*slot = &passedHeader{folded: f, canonical: as, quota: quota, bit: 1 << n, next: *slot}
		s.passedLens |= lenBit(len(name))
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

// lenBit is the bit of passedLens for a name n bytes long.
func lenBit(n int) uint64 { return 1 << min(n, 63) }

// passes returns how a client of the style gets the header named k (in
// any case) of an upstream of its own style, or nil when it does not.
func (s *dialect) passes(k []byte) *passedHeader {
	return s.passed[passSlot(k)].find(k)
}

// find returns the header named k among p and the names after it in its
// slot, nil when none is.
func (p *passedHeader) find(k []byte) *passedHeader {
	for ; p != nil; p = p.next {
		if p.folded.matches(k) {
			return p
		}
	}
	return nil
}
