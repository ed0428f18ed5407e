// Package param is what the OpenAI-family request decoders (chat
// completions, Responses) share: the frame of a decoding (Decode, the
// Decoder state, the pooled wire request), and the readers of the optional
// scalar members a decoder keeps as raw JSON spans (their absence
// matters), with the 400 such an API gives for a value of the wrong type.
package param

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Absent reports whether a raw member is absent or null.
func Absent(v []byte) bool {
	k := rawjson.KindOf(v)
	return k == rawjson.KindInvalid || k == rawjson.KindNull
}

// Int reads an optional integer member; ok reports whether it is there.
func Int(v []byte, name string) (n int64, ok bool, err *codec.Error) {
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return 0, false, nil
	case rawjson.KindNumber:
		if n, e := strconv.ParseInt(rawjson.UnsafeString(v), 10, 64); e == nil {
			return n, true, nil
		}
		// 512.0 is an integer too.
		if f, e := strconv.ParseFloat(rawjson.UnsafeString(v), 64); e == nil && f == float64(int64(f)) {
			return int64(f), true, nil
		}
	}
	return 0, false, Invalid(name, "'"+name+"' must be an integer")
}

// Float reads an optional number member.
func Float(v []byte, name string) (*float64, *codec.Error) {
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return nil, nil
	case rawjson.KindNumber:
		if f, e := strconv.ParseFloat(rawjson.UnsafeString(v), 64); e == nil {
			return &f, nil
		}
	}
	return nil, Invalid(name, "'"+name+"' must be a number")
}

// Bool reads an optional boolean member, false when absent.
func Bool(v []byte, name string) (bool, *codec.Error) { return BoolOr(v, name, false) }

// BoolOr reads an optional boolean member, def when absent.
func BoolOr(v []byte, name string, def bool) (bool, *codec.Error) {
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return def, nil
	case rawjson.KindTrue:
		return true, nil
	case rawjson.KindFalse:
		return false, nil
	}
	return def, Invalid(name, "'"+name+"' must be a boolean")
}

// Invalid is the 400 of a request whose member name is wrong.
func Invalid(name, msg string) *codec.Error {
	return &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: name, Message: msg}
}
