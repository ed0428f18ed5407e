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
	// first, under strUpstreamRequestID, and the others as they are; by
	// the length of their names (lenBucket), so that most of an answer's
	// headers are passed over at one look.
	passed [64][]*passedHeader
}

// passedHeader is the name of an upstream's header to find (folded), the
// name a client gets it under, as fasthttp spells it once read (as bytes,
// to be set without a conversion), whether it tells of a quota, and its
// bit, one of a dialect's own.
type passedHeader struct {
	folded    foldedName
	canonical []byte
	quota     bool
	bit       uint64
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
		b := &s.passed[lenBucket(len(name))]
		*b = append(*b, &passedHeader{folded: foldName(name), canonical: as, quota: quota, bit: 1 << n})
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

// lenBucket is the index in passed of the names n bytes long (and
// longer, for the last).
func lenBucket(n int) int { return min(n, 63) }

// passes returns how a client of the style gets the header named k (in
// any case) of an upstream of its own style, or nil when it does not.
func (s *dialect) passes(k []byte) *passedHeader {
	for _, p := range s.passed[lenBucket(len(k))] {
		if p.folded.matches(k) {
			return p
		}
	}
	return nil
}
