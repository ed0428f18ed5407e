package goldentest

import (
	"strings"
	"unicode/utf8"
)

// AsEncoded is s as the codec's encoders write it in JSON: each byte that
// is not part of valid UTF-8 becomes U+FFFD, one per byte, as
// encoding/json writes them (strings.ToValidUTF8 would replace a run of
// them with one).
func AsEncoded(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // an invalid byte ranges as one utf8.RuneError
		b.WriteRune(r)
	}
	return b.String()
}
