package param

import (
	"errors"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// API decodes as the OpenAI-family APIs read JSON: keys case-sensitively
// (sonic's default matches "MODEL" to "model"), and strings checked:
// ValidateString makes sonic reject control characters and replace invalid
// UTF-8 (for about 4% more time); it misses a bad escape nested in a
// skipped member of an array element that another element follows, so
// Unmarshal still checks the strings itself.
var API = sonic.Config{CaseSensitive: true, ValidateString: true}.Froze()

var (
	errEmpty   = errors.New("empty JSON document")
	errStrings = errors.New("invalid JSON string: control character or bad escape")
)

// UnmarshalString decodes the JSON value s into v with API, without
// copying strings that have no escapes.
func UnmarshalString(s string, v any) error { return API.UnmarshalFromString(s, v) }

// Unmarshal decodes the JSON document b into v without copying b: strings
// without escapes in v point into b. It accepts only strict JSON: no
// control characters or bad escapes in any string (rawjson.ValidStrings,
// the pass-through path's check), unless checked says that the strings of
// b were checked already.
func Unmarshal(b []byte, v any, checked bool) error {
	if len(b) == 0 {
		return errEmpty
	}
	if err := UnmarshalString(rawjson.UnsafeString(b), v); err != nil {
		return err
	}
	if !checked && !rawjson.ValidStrings(b) {
		return errStrings
	}
	return nil
}

// BodyError is the 400 of a request body that Unmarshal refused.
func BodyError(body []byte) *codec.Error {
	if sonic.Valid(body) && rawjson.ValidStrings(body) {
		return Invalid("", "A member of the request body has the wrong JSON type.")
	}
	return Invalid("", "We could not parse the JSON body of your request. (The body must be valid JSON.)")
}
