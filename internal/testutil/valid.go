package testutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ValidJSON is json.Valid without encoding/json's limit of 10000 levels
// of nesting: a document nested deeper is JSON still. An encoder that
// wraps a value a decoder took at the limit (a Gemini tool schema in its
// declaration, a chunk in the JSON-array framing) writes one, which a
// fuzz target must not take for invalid.
func ValidJSON(b []byte) bool {
	if json.Valid(b) {
		return true
	}
	// The tokens one at a time: the decoder checks each as json.Valid
	// would, but keeps no count of the containers open.
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // a number past float64's range (1e700) is JSON
	for depth := 0; ; {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			break
		}
	}
	_, err := d.Token()
	return errors.Is(err, io.EOF) // one value, and nothing after it
}
