package rawjson

import "strings"

// ParseDataURL splits a base64 data: URL, "data:<media type>[;params];base64,<data>",
// into its media type (parameters such as charset dropped) and its data, without
// copying. ok is false when u is not a data: URL, has no comma, or is not base64.
// The media type may be empty ("data:;base64,...").
func ParseDataURL(u string) (mediaType, data string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	meta, ok = strings.CutSuffix(meta, ";base64")
	if !ok {
		return "", "", false
	}
	mediaType, _, _ = strings.Cut(meta, ";")
	return mediaType, data, true
}
