package codec

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Tool call ids that carry a signature.
//
// A Gemini upstream signs its function calls (thoughtSignature), and Gemini
// 3 rejects the next turn when a call comes back without its signature. An
// OpenAI tool call or an Anthropic tool_use block has no place for it, but
// every client echoes the id unchanged, twice: in the assistant turn it sends
// back and in the tool result that answers it. So the signature rides in the
// id the client sees:
//
//	gsig<k><n>_<payload>_<id>
//
// payload, n characters long, is the signature: for k = 'b' a padded standard
// base64 signature (what Gemini sends) with '+' and '/' replaced by '-' and
// '_' and its '=' padding removed; for k = 'r' any other string, as unpadded
// base64url of its bytes. The result uses only [A-Za-z0-9_-], so it is also a
// valid Anthropic tool_use id (^[a-zA-Z0-9_-]+$) if a pass-through exchange
// forwards it as it is. Request decoders take the signature back out of
// every id, so upstream encoders only ever see the original id.

// signedIDPrefix starts an id that carries a signature.
const signedIDPrefix = "gsig"

// EncodeSignedID returns the id a client sees for a tool call with id and
// signature sig. Without a signature, or when id already carries sig, it
// returns id unchanged.
func EncodeSignedID(id, sig string) string {
	if sig == "" {
		return id
	}
	if _, s := DecodeSignedID(id); s == sig {
		return id
	}
	dst := make([]byte, 0, len(signedIDPrefix)+12+len(sig)*4/3+len(id))
	dst = append(dst, signedIDPrefix...)
	if IsStdBase64(sig) {
		body := strings.TrimRight(sig, "=")
		dst = append(dst, 'b')
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, '_')
		for i := range len(body) {
			switch c := body[i]; c {
			case '+':
				dst = append(dst, '-')
			case '/':
				dst = append(dst, '_')
			default:
				dst = append(dst, c)
			}
		}
	} else {
		dst = append(dst, 'r')
		dst = strconv.AppendInt(dst, int64(base64.RawURLEncoding.EncodedLen(len(sig))), 10)
		dst = append(dst, '_')
		dst = base64.RawURLEncoding.AppendEncode(dst, []byte(sig))
	}
	dst = append(dst, '_')
	return string(append(dst, id...))
}

// DecodeSignedID splits an id made by EncodeSignedID into the original id
// and the signature. Any other id comes back as it is, with no signature.
func DecodeSignedID(s string) (id, sig string) {
	rest, ok := strings.CutPrefix(s, signedIDPrefix)
	if !ok || len(rest) < 3 {
		return s, ""
	}
	kind := rest[0]
	digits := 1
	for digits < len(rest) && digits <= 9 && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	n, err := strconv.Atoi(rest[1:digits])
	rest = rest[digits:]
	if err != nil || n < 0 || len(rest) < n+2 || rest[0] != '_' || rest[n+1] != '_' {
		return s, ""
	}
	payload, id := rest[1:n+1], rest[n+2:]
	switch kind {
	case 'b':
		if len(payload)%4 == 1 || !isURLBase64(payload) {
			return s, ""
		}
		b := make([]byte, len(payload), len(payload)+3)
		for i := range len(payload) {
			switch c := payload[i]; c {
			case '-':
				b[i] = '+'
			case '_':
				b[i] = '/'
			default:
				b[i] = c
			}
		}
		for len(b)%4 != 0 {
			b = append(b, '=')
		}
		return id, string(b)
	case 'r':
		b, err := base64.RawURLEncoding.DecodeString(payload)
		if err != nil || len(b) == 0 {
			return s, ""
		}
		return id, string(b)
	}
	return s, ""
}

// IsStdBase64 reports whether s is non-empty padded standard base64 (what
// Gemini's bytes fields hold): a length that is a multiple of 4, the
// standard alphabet, and '=' only as final padding.
func IsStdBase64(s string) bool {
	if len(s) == 0 || len(s)%4 != 0 {
		return false
	}
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 || len(body) == 0 {
		return false
	}
	for i := range len(body) {
		if c := body[i]; !isAlnum(c) && c != '+' && c != '/' {
			return false
		}
	}
	return true
}

func isURLBase64(s string) bool {
	for i := range len(s) {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
