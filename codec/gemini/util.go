package gemini

import (
	"bytes"
	"strings"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// validJSON reports whether b is one valid JSON value (strings included),
// by the decoders' own reading.
func validJSON(b []byte) bool {
	p := parser{b: b}
	p.skip()
	return p.end()
}

// validObject reports what validJSON reports of b, an object as far as its
// first byte goes, in a fraction of the time for most objects: sonic.Valid
// (structure, in SIMD) with rawjson.ValidStrings (the strings, which sonic
// does not check) accept them. What those two refuse, validJSON reads and
// has the last word on. FuzzValidObject checks that they accept nothing
// validJSON refuses.
func validObject(b []byte) bool {
	if len(b) > 0 && b[0] == '{' && sonic.Valid(b) && rawjson.ValidStrings(b) {
		return true
	}
	return validJSON(b)
}

func trimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// magic are the base64 openings of common media files.
var magic = [...]struct{ prefix, mediaType string }{
	{"iVBORw0KGgo", "image/png"},
	{"/9j/", "image/jpeg"},
	{"R0lGOD", "image/gif"},
	{"UklGR", "image/webp"},
	{"JVBERi0", "application/pdf"},
}

// sniffMediaType guesses the media type of base64 data from its first
// bytes; Gemini requires one on inlineData.
func sniffMediaType(data string) string {
	for _, m := range magic {
		if strings.HasPrefix(data, m.prefix) {
			return m.mediaType
		}
	}
	return "application/octet-stream"
}

// extensions are the media types of common file name extensions.
var extensions = [...]struct{ ext, mediaType string }{
	{".png", "image/png"}, {".jpg", "image/jpeg"}, {".jpeg", "image/jpeg"},
	{".gif", "image/gif"}, {".webp", "image/webp"}, {".pdf", "application/pdf"},
}

// mediaTypeOfURL guesses a media type from the URL's path extension, or
// returns "" (fileData.mimeType is optional for URLs).
func mediaTypeOfURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	for _, e := range extensions {
		if len(u) >= len(e.ext) && strings.EqualFold(u[len(u)-len(e.ext):], e.ext) {
			return e.mediaType
		}
	}
	return ""
}

// appendCompact appends the JSON value v without the whitespace outside its
// strings.
func appendCompact(dst, v []byte) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := rawjson.StringEnd(v, i)
			if end < 0 {
				return append(dst, v[i:]...)
			}
			dst = append(dst, v[i:end]...)
			i = end - 1
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// rawString returns the raw JSON value v as canonical text: v itself, or,
// when it spans several lines (Gemini pretty-prints whole responses), a
// compact copy.
func rawString(v []byte) string {
	if bytes.IndexByte(v, '\n') < 0 {
		return rawjson.UnsafeString(v)
	}
	return rawjson.UnsafeString(appendCompact(make([]byte, 0, len(v)), v))
}
