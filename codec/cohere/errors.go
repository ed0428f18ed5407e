package cohere

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Cohere's errors are {"id": …, "message": …}: the status says the kind.

// DecodeError reads a Cohere error body; ok is false when it has no
// message string.
func DecodeError(status int, body []byte) (codec.Error, bool) {
	f := [...]rawjson.Field{{Key: "message"}}
	if rawjson.Lookup(body, f[:], false) != nil || f[0].Start < 0 {
		return codec.Error{}, false
	}
	msg, err := rawjson.Unquote(body[f[0].Start:f[0].End])
	if err != nil {
		return codec.Error{}, false
	}
	return codec.Error{Status: status, Kind: codec.KindForStatus(status), Message: msg}, true
}

// AppendError appends e in Cohere's error shape.
func AppendError(dst []byte, e *codec.Error) []byte {
	dst = append(dst, `{"message":`...)
	dst = rawjson.AppendString(dst, e.Message)
	return append(dst, '}')
}
