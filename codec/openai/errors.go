package openai

import (
	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// errorTypes names each kind of error as OpenAI's API does.
var errorTypes = [...]string{
	codec.KindServer:            "server_error",
	codec.KindInvalidRequest:    "invalid_request_error",
	codec.KindAuthentication:    "invalid_request_error",
	codec.KindPermission:        "permission_error",
	codec.KindNotFound:          "invalid_request_error",
	codec.KindTooLarge:          "invalid_request_error",
	codec.KindRateLimitRequests: "requests",
	codec.KindRateLimitTokens:   "tokens",
	codec.KindUpstream:          "server_error",
	codec.KindTimeout:           "server_error",
	codec.KindUnavailable:       "server_error",
}

// AppendError appends e in OpenAI's error shape:
// {"error":{"message":…,"type":…,"param":…,"code":…}}.
func AppendError(dst []byte, e *codec.Error) []byte {
	typ := e.Type
	if typ == "" && int(e.Kind) < len(errorTypes) {
		typ = errorTypes[e.Kind]
	}
	dst = append(dst, `{"error":{"message":`...)
	dst = rawjson.AppendString(dst, e.Message)
	dst = append(dst, `,"type":`...)
	dst = rawjson.AppendString(dst, typ)
	dst = append(dst, `,"param":`...)
	dst = rawjson.AppendStringOrNull(dst, e.Param)
	dst = append(dst, `,"code":`...)
	dst = rawjson.AppendStringOrNull(dst, e.Code)
	return append(dst, "}}"...)
}

type wireError struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// DecodeError reads an OpenAI error body returned with the given status.
// ok is false when the body is not in OpenAI's shape.
func DecodeError(status int, body []byte) (e codec.Error, ok bool) {
	var w wireError
	if sonic.Unmarshal(body, &w) != nil || w.Error == nil {
		return codec.Error{}, false
	}
	return codec.Error{
		Status:  status,
		Kind:    codec.KindForStatus(status),
		Message: w.Error.Message,
		Type:    w.Error.Type,
		Param:   scalarString(w.Error.Param),
		Code:    scalarString(w.Error.Code),
	}, true
}

// scalarString renders a string or number field (OpenAI has sent both as
// "code") as a string.
func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		b, _ := sonic.Marshal(v)
		return string(b)
	}
	return ""
}

func invalid(param, msg string) *codec.Error {
	return &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: param, Message: msg}
}
