package anthropic

import (
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// errorTypes names each kind of error as Anthropic's API does
// (https://platform.claude.com/docs/en/api/errors). Anthropic has no type of
// its own for 502 or 503: a failed upstream (502) is api_error, as for any
// unexpected server fault, and no channel being available (503) is
// overloaded_error, the type clients treat as "retry later".
var errorTypes = [...]string{
	codec.KindServer:            "api_error",
	codec.KindInvalidRequest:    "invalid_request_error",
	codec.KindAuthentication:    "authentication_error",
	codec.KindPermission:        "permission_error",
	codec.KindNotFound:          "not_found_error",
	codec.KindTooLarge:          "request_too_large",
	codec.KindRateLimitRequests: "rate_limit_error",
	codec.KindRateLimitTokens:   "rate_limit_error",
	codec.KindUpstream:          "api_error",
	codec.KindTimeout:           "timeout_error",
	codec.KindUnavailable:       "overloaded_error",
}

// ErrorType returns Anthropic's error type for e: e.Type when it is one of
// Anthropic's (an Anthropic upstream's own type, relayed), else the type of
// e.Kind. Another style's type (an OpenAI "server_error", a Gemini
// "UNAVAILABLE", which other dialects' stream decoders keep) would mean
// nothing to an Anthropic client.
func ErrorType(e *codec.Error) string {
	if _, ok := typeStatuses[e.Type]; ok {
		return e.Type
	}
	if int(e.Kind) < len(errorTypes) {
		return errorTypes[e.Kind]
	}
	return "api_error"
}

// KindForType maps an Anthropic error type to the canonical kind; a type
// this package does not know (billing_error, conflict_error…) is classified
// by the HTTP status.
func KindForType(typ string, status int) codec.ErrorKind {
	switch typ {
	case "invalid_request_error":
		return codec.KindInvalidRequest
	case "authentication_error":
		return codec.KindAuthentication
	case "permission_error":
		return codec.KindPermission
	case "not_found_error":
		return codec.KindNotFound
	case "request_too_large":
		return codec.KindTooLarge
	case "rate_limit_error":
		return codec.KindRateLimitRequests
	case "timeout_error":
		return codec.KindTimeout
	case "overloaded_error":
		return codec.KindUnavailable
	case "api_error":
		return codec.KindServer
	}
	return codec.KindForStatus(status)
}

// typeStatuses are Anthropic's error types and the HTTP status each comes
// with (https://platform.claude.com/docs/en/api/errors).
var typeStatuses = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// statusForType is the HTTP status Anthropic sends with an error type, for
// errors that arrive inside a stream (after the 200); 500 for a type it
// does not know.
func statusForType(typ string) int {
	if status, ok := typeStatuses[typ]; ok {
		return status
	}
	return 500
}

// AppendError appends e in Anthropic's error shape:
// {"type":"error","error":{"type":…,"message":…}}.
func AppendError(dst []byte, e *codec.Error) []byte {
	return appendErrorRequestID(dst, e, "")
}

// appendErrorRequestID is AppendError with the top-level request_id that
// Anthropic adds (it also sends it as the request-id header); none when
// requestID is empty.
func appendErrorRequestID(dst []byte, e *codec.Error, requestID string) []byte {
	dst = append(dst, `{"type":"error","error":{"type":`...)
	dst = rawjson.AppendString(dst, ErrorType(e))
	dst = append(dst, `,"message":`...)
	dst = rawjson.AppendString(dst, e.Message)
	dst = append(dst, '}')
	if requestID != "" {
		dst = append(dst, `,"request_id":`...)
		dst = rawjson.AppendString(dst, requestID)
	}
	return append(dst, '}')
}

// AppendStreamError appends the SSE event that reports a failure after a
// stream started: event: error, with the error body as data. The stream
// ends after it (no message_delta, no message_stop), as Anthropic's do.
func AppendStreamError(dst []byte, e *codec.Error) []byte {
	dst = append(dst, "event: error\ndata: "...)
	dst = AppendError(dst, e)
	return append(dst, "\n\n"...)
}

// DecodeError reads an Anthropic error body returned with the given status.
// ok is false when the body is not in Anthropic's shape. The strings of e are
// copies: e may outlive body.
func DecodeError(status int, body []byte) (e codec.Error, ok bool) {
	e, _, ok = decodeErrorRequestID(status, body)
	return e, ok
}

// decodeErrorRequestID is DecodeError that also returns the body's
// request_id ("" when none).
func decodeErrorRequestID(status int, body []byte) (e codec.Error, requestID string, ok bool) {
	var w wireError
	if unmarshal(body, &w) != nil || w.Type != "error" || w.Error.Type == "" {
		return codec.Error{}, "", false
	}
	return codec.Error{
		Status:  status,
		Kind:    KindForType(w.Error.Type, status),
		Message: strings.Clone(w.Error.Message),
		Type:    strings.Clone(w.Error.Type),
	}, strings.Clone(w.RequestID), true
}
