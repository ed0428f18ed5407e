package gemini

import (
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
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

// EncodeCallID returns a tool call id that carries the thought signature
// sig along with id (codec.EncodeSignedID).
func EncodeCallID(id, sig string) string { return codec.EncodeSignedID(id, sig) }

// DecodeCallID splits an id made by EncodeCallID into the original id and
// the thought signature (codec.DecodeSignedID).
func DecodeCallID(s string) (id, sig string) { return codec.DecodeSignedID(s) }

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
