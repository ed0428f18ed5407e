package anthropic

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Tool-use ids that carry a signature.
//
// A Gemini upstream signs its function calls (thoughtSignature), and Gemini 3
// rejects the next turn when a call comes back without its signature. An
// Anthropic tool_use block has no place for it, but every client echoes the
// tool_use id unchanged, twice: in the assistant turn it sends back and in the
// tool_result.tool_use_id that answers it. So the signature rides in the id
// the client sees:
//
//	gsig<k><n>_<payload>_<id>
//
// payload, n characters long, is the signature: for k = 'b' a padded standard
// base64 signature (what Gemini sends) with '+' and '/' replaced by '-' and
// '_' and its '=' padding removed; for k = 'r' any other string, as unpadded
// base64url of its bytes. The result uses only [A-Za-z0-9_-], so it is also a
// valid Anthropic tool_use id (^[a-zA-Z0-9_-]+$) if a pass-through exchange
// forwards it to Anthropic as it is.
//
// The format is the one codec/gemini uses for the same purpose (its
// EncodeCallID), so an id encoded on either side decodes on the other, and
// EncodeToolID does not wrap an id that already carries the same signature.
// DecodeRequest strips the signature from every tool_use id and
// tool_result.tool_use_id, so upstream encoders only ever see the original id.

// sigPrefix starts an id that carries a signature.
const sigPrefix = "gsig"

// EncodeToolID returns the tool_use id that an Anthropic client sees for a
// canonical tool call with id and signature sig. Without a signature, or when
// id already carries sig, it returns id unchanged.
func EncodeToolID(id, sig string) string {
	if sig == "" {
		return id
	}
	if _, s := DecodeToolID(id); s == sig {
		return id
	}
	return string(appendToolID(make([]byte, 0, len(sigPrefix)+12+len(sig)*4/3+len(id)), id, sig))
}

// appendToolID appends what EncodeToolID returns, without the checks.
func appendToolID(dst []byte, id, sig string) []byte {
	dst = append(dst, sigPrefix...)
	if isStdBase64(sig) {
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
		n := base64.RawURLEncoding.EncodedLen(len(sig))
		dst = append(dst, 'r')
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '_')
		dst = base64.RawURLEncoding.AppendEncode(dst, bytesOf(sig))
	}
	dst = append(dst, '_')
	return append(dst, id...)
}

// DecodeToolID splits an id made by EncodeToolID into the original id and the
// signature. Any other id comes back as it is, with no signature.
func DecodeToolID(s string) (id, sig string) {
	rest, ok := strings.CutPrefix(s, sigPrefix)
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

// isStdBase64 reports whether s is padded standard base64 that the 'b' form
// restores exactly: a length that is a multiple of 4, the standard alphabet,
// and '=' only as final padding.
func isStdBase64(s string) bool {
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

// appendUpstreamID appends id as a JSON string that Anthropic accepts as a
// tool_use id (^[a-zA-Z0-9_-]+$): other characters become '_' (some
// OpenAI-compatible servers use ids such as "functions.get_weather:0"). The
// mapping is deterministic, so a call and its result still match.
func appendUpstreamID(dst []byte, id string) []byte {
	dst = append(dst, '"')
	for i := range len(id) {
		c := id[i]
		if !isAlnum(c) && c != '_' && c != '-' {
			c = '_'
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}
