package codec

import (
	"bytes"
	"strings"
)

// The dialects' names, as signature origins (Part.SigOrigin,
// StreamInfo.Origin).
const (
	DialectOpenAI    = "openai"
	DialectAnthropic = "anthropic"
	DialectGemini    = "gemini"
)

// A thinking signature is valid only at the provider that minted it:
// Anthropic and Gemini both refuse another's ("Invalid signature in
// thinking block", "Corrupted thought signature"). So a signature that
// reaches a client of another style is tagged with its origin
// (TagSignature), the client's next request gives it back tagged, and its
// decoder splits the tag off into Part.SigOrigin (SplitSignature). An
// upstream encoder then sends a signature only to the provider that minted
// it; elsewhere it drops it as it drops unsigned thinking, and the
// conversation goes on, which a switch of model family mid-conversation
// needs. A same-style exchange is relayed untouched, so an untagged
// signature comes from the client's own style.

// SigTag is how a tagged signature starts: 8 bytes, which a request
// reader's check of the strings can look for (rawjson.LookupValidMarked)
// before HasSignatureTags is run on the whole body.
const SigTag = "rosetta:"

// TagSignature returns sig as a client of style client receives it from a
// provider of style origin: unchanged within one style (or with no origin
// known), else "rosetta:<origin>:<sig>".
func TagSignature(sig, origin, client string) string {
	if sig == "" || origin == "" || origin == client {
		return sig
	}
	return SigTag + origin + ":" + sig
}

// SplitSignature reads a signature a client of style client sent: the
// signature and the style whose provider minted it (client itself when it
// is not tagged).
func SplitSignature(s, client string) (sig, origin string) {
	rest, ok := strings.CutPrefix(s, SigTag)
	if !ok {
		return s, client
	}
	origin, sig, ok = strings.Cut(rest, ":")
	if !ok || sig == "" {
		return s, client
	}
	return sig, origin
}

// sigTagQuoted is how a tagged signature starts in JSON.
var sigTagQuoted = []byte(`"` + SigTag)

// HasSignatureTags reports whether a request body holds a string that
// starts as a tagged signature does. Such a request cannot be relayed as it
// is even to a provider of the client's style: the tags must come off, and
// another provider's signatures out (a translation through the canonical
// model does both).
func HasSignatureTags(body []byte) bool {
	for {
		i := bytes.Index(body, sigTagQuoted)
		if i < 0 {
			return false
		}
		body = body[i+len(sigTagQuoted):]
		for _, d := range [...]string{DialectAnthropic, DialectGemini, DialectOpenAI} {
			if len(body) > len(d) && string(body[:len(d)]) == d && body[len(d)] == ':' {
				return true
			}
		}
	}
}

// SignedFor returns p's signature when a provider of style upstream can
// verify it (it minted it, or where it came from is not known), else "".
func (p *Part) SignedFor(upstream string) string {
	if p.SigOrigin != "" && p.SigOrigin != upstream {
		return ""
	}
	return p.Signature
}
