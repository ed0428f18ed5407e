package responses

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/param"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// What the proxy stores of a translated exchange, and how it continues
// one. A response's items are kept in Responses shapes: its input items
// (AppendInputItems) and output items (AppendOutput, or the stream
// encoder's Response), each a JSON array. A request with
// previous_response_id is continued by Prepend: the stored items of that
// response go before its input, and the result is decoded as any request.
// The input items of a continued request hold the stored ones too, so a
// chain of turns needs only its last response to go on.
//
// Reasoning signatures travel in the items' encrypted_content, tagged
// with the style that minted them, and an upstream encoder sends a
// signature only to that style (codec.Part.SignedFor): a conversation may
// switch channels between turns.

// AppendInputItems appends the input items of r, a request DecodeRequest
// read (after Prepend, when it continues a response), as a JSON array:
// the items as the client sent them, a string input as one user message.
func AppendInputItems(dst []byte, r *codec.Request) []byte {
	dst = append(dst, '[')
	dst = appendInput(dst, len(dst), validUTF8(rawjson.UnsafeBytes(r.Session.Input)))
	return append(dst, ']')
}

// appendInput appends the items of input (a JSON string or array) to the
// array begun at offset first of dst (see separate).
func appendInput(dst []byte, first int, input []byte) []byte {
	switch rawjson.KindOf(input) {
	case rawjson.KindString:
		dst = append(separate(dst, first), `{"type":"message","role":"user","content":[{"type":"input_text","text":`...)
		dst = append(dst, input...)
		return append(dst, "}]}"...)
	case rawjson.KindArray:
		return appendSeparated(dst, first, arrayElements(input))
	}
	return dst
}

// arrayElements is the inside of the JSON array a, without its brackets
// and the spaces next to them.
func arrayElements(a []byte) []byte {
	if a = trimSpace(a); len(a) < 2 {
		return nil
	}
	return trimSpace(a[1 : len(a)-1])
}

// trimSpace is b without the JSON spaces around it.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && rawjson.IsSpace(b[i]) {
		i++
	}
	for j > i && rawjson.IsSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// Prepend appends body, a Responses request, with the stored items put
// before its input, in order: each of stored is a JSON array of items
// (the input items and then the output of the response it continues). A
// string input becomes a user message after them. It fails with a 400
// when body is not a JSON object, and with a 500 when a stored value is
// not an array. The stored arrays are the gateway's own, checked when
// they were made, and the result is read by DecodeRequest, which checks
// all of it: they are not checked again here.
func Prepend(dst, body []byte, stored ...[]byte) ([]byte, *codec.Error) {
	f := [...]rawjson.Field{{Key: "input"}}
	if rawjson.Lookup(body, f[:], false) != nil || rawjson.KindOf(trimSpace(body)) != rawjson.KindObject {
		return dst, param.BodyError(body)
	}
	var input []byte
	if f[0].Start >= 0 {
		input = body[f[0].Start:f[0].End]
	}
	if k := rawjson.KindOf(input); f[0].Start >= 0 && k != rawjson.KindString && k != rawjson.KindArray && k != rawjson.KindNull {
		return dst, param.Invalid("input", "'input' must be a string or an array of input items")
	}
	orig := len(dst)
	start, end := f[0].Start, f[0].End
	if start < 0 { // no input: put one first
		start = rawjson.SkipSpace(body, 0) + 1
		end = start
	}
	dst = append(dst, body[:start]...)
	if f[0].Start < 0 {
		dst = append(dst, `"input":`...)
	}
	dst = append(dst, '[')
	n := len(dst)
	for _, items := range stored {
		if items = trimSpace(items); rawjson.KindOf(items) != rawjson.KindArray || items[len(items)-1] != ']' {
			return dst[:orig], &codec.Error{Status: 500, Kind: codec.KindServer, Message: "A stored response cannot be read."}
		}
		dst = appendSeparated(dst, n, arrayElements(items))
	}
	dst = append(appendInput(dst, n, input), ']')
	if f[0].Start < 0 && body[rawjson.SkipSpace(body, start)] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, body[end:]...), nil
}

// appendSeparated appends elements to the array begun at offset first of
// dst (see separate).
func appendSeparated(dst []byte, first int, elements []byte) []byte {
	if len(elements) == 0 {
		return dst
	}
	return append(separate(dst, first), elements...)
}

// separate appends the comma that goes before a new element of the array
// begun at offset first of dst, when it has elements already.
func separate(dst []byte, first int) []byte {
	if len(dst) > first {
		dst = append(dst, ',')
	}
	return dst
}
