package anthropic

import "github.com/rosetta-gateway/rosetta/codec"

// EncodeToolID returns the tool_use id that an Anthropic client sees for a
// canonical tool call with id and signature sig (codec.EncodeSignedID).
func EncodeToolID(id, sig string) string { return codec.EncodeSignedID(id, sig) }

// DecodeToolID splits an id made by EncodeToolID into the original id and
// the signature (codec.DecodeSignedID).
func DecodeToolID(s string) (id, sig string) { return codec.DecodeSignedID(s) }

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// appendUpstreamID appends id as a JSON string that Anthropic accepts as a
// tool_use id (^[a-zA-Z0-9_-]+$): other characters become '_' (some
// OpenAI-compatible servers use ids such as "functions.get_weather:0"). The
// mapping is deterministic, so a call and its result still match. A
// Gemini signature riding in the id (codec.EncodeSignedID) is left out:
// it is Gemini's alone, and a call and its result lose the same bytes.
func appendUpstreamID(dst []byte, id string) []byte {
	id, _ = codec.DecodeSignedID(id)
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
