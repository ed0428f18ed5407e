package gemini

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Tool call ids and thought signatures.
//
// Gemini 2.x function calls have no id (Gemini 3 sends one), and pairs
// results with calls by function name and order. Every canonical tool call
// still needs an id, because OpenAI and Anthropic clients pair by id. So:
//
//   - a call that has an id keeps it;
//   - a call without one gets a synthesised id: in a response
//     "gcall_<responseId>_<n>", n counting the calls of the response from 0
//     (the responseId is unique, so the id is unique in the conversation; a
//     response without one uses a hash of its first chunk); in a request's
//     history "gcall_h<n>", n counting the id-less calls from the start of
//     the conversation. Synthesised ids are never sent to Gemini.
//
// Gemini 3 rejects a conversation whose function calls lost their thought
// signature, and a client of another dialect has no place to keep one. But
// every client echoes tool call ids reliably, so the signature rides in the
// id: EncodeCallID(id, sig) is what the client sees, and the Gemini encoder
// takes the signature back out with DecodeCallID and puts it on the
// functionCall part again.

// synthPrefix starts every id the gateway invents for a Gemini call.
const synthPrefix = "gcall_"

// sigPrefix starts an id that carries a thought signature.
const sigPrefix = "gsig"

// EncodeCallID returns a tool call id that carries the thought signature sig
// along with id, using only the characters [A-Za-z0-9_-] (URL-safe, and
// valid as an Anthropic tool_use id). With no signature it returns id
// unchanged. The form is
//
//	gsig<k><n>_<payload>_<id>
//
// where payload, n characters long, is the signature: for k = 'b' a standard
// base64 signature (what Gemini sends) with '+' and '/' replaced by '-' and
// '_' and its '=' padding removed; for k = 'r' any other string, as unpadded
// base64url of its bytes. DecodeCallID reverses it exactly.
func EncodeCallID(id, sig string) string {
	if sig == "" {
		return id
	}
	kind, payload := byte('b'), ""
	if isStdBase64(sig) {
		payload = toURLAlphabet(strings.TrimRight(sig, "="))
	} else {
		kind, payload = 'r', base64.RawURLEncoding.EncodeToString([]byte(sig))
	}
	b := make([]byte, 0, len(sigPrefix)+1+8+len(payload)+2+len(id))
	b = append(b, sigPrefix...)
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(len(payload)), 10)
	b = append(b, '_')
	b = append(b, payload...)
	b = append(b, '_')
	b = append(b, id...)
	return string(b)
}

// DecodeCallID splits an id made by EncodeCallID into the original id and
// the thought signature. Any other id is returned as it is, with no
// signature.
func DecodeCallID(s string) (id, sig string) {
	rest, ok := strings.CutPrefix(s, sigPrefix)
	if !ok || len(rest) < 3 {
		return s, ""
	}
	kind := rest[0]
	digits := 1
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	n, err := strconv.Atoi(rest[1:digits])
	rest = rest[digits:]
	if err != nil || digits > 9 || len(rest) < n+2 || rest[0] != '_' || rest[n+1] != '_' {
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
	if len(s)%4 != 0 {
		return false
	}
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 {
		return false
	}
	for i := range len(body) {
		if c := body[i]; !isAlnum(c) && c != '+' && c != '/' {
			return false
		}
	}
	return true
}

// toURLAlphabet maps standard base64 to the URL-safe alphabet.
func toURLAlphabet(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch c {
		case '+':
			b[i] = '-'
		case '/':
			b[i] = '_'
		}
	}
	return string(b)
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

// isSynthesised reports whether a (signature-free) id was made up by the
// gateway, and so must not be sent to Gemini.
func isSynthesised(id string) bool { return strings.HasPrefix(id, synthPrefix) }

// appendSynthID appends "gcall_<scope>_<n>", with the characters of scope
// outside [A-Za-z0-9-] replaced by '-'.
func appendSynthID(dst []byte, scope string, n int) []byte {
	dst = append(dst, synthPrefix...)
	for i := range len(scope) {
		c := scope[i]
		if !isAlnum(c) && c != '-' {
			c = '-'
		}
		dst = append(dst, c)
	}
	dst = append(dst, '_')
	return strconv.AppendInt(dst, int64(n), 10)
}

// callID is the canonical id of a Gemini function call: its own id, or one
// synthesised from scope and n, carrying sig. An own id that already carries
// a signature (the gateway's own output, echoed) is kept as it is.
func callID(own, scope string, n int, sig string) string {
	if _, s := DecodeCallID(own); s != "" {
		return own
	}
	id := own
	if id == "" {
		var buf [96]byte
		id = string(appendSynthID(buf[:0], scope, n))
	}
	return EncodeCallID(id, sig)
}
