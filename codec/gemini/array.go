package gemini

// The JSON-array stream: streamGenerateContent without alt=sse answers with
// one JSON array whose elements (GenerateContentResponse chunks) arrive one
// by one: "[{…}\n,\r\n{…}\n,\r\n{…}\n]", each element pretty-printed.

// arraySeparator is what Gemini writes between two elements.
const arraySeparator = "\n,\r\n"

// appendArrayStart appends the opening of an array stream.
func appendArrayStart(dst []byte) []byte { return append(dst, '[') }

// appendArrayElement appends one element (a chunk's JSON) of an array
// stream; n is the number of elements written before it.
func appendArrayElement(dst []byte, n int, elem []byte) []byte {
	if n > 0 {
		dst = append(dst, arraySeparator...)
	}
	return append(dst, elem...)
}

// appendArrayEnd appends the closing of an array stream.
func appendArrayEnd(dst []byte) []byte { return append(dst, "\n]"...) }
