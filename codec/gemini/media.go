package gemini

import "strings"

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
