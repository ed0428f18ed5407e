package gemini

import (
	"strconv"
	"strings"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Gemini errors are google.rpc.Status bodies:
// {"error":{"code":<HTTP status>,"message":…,"status":"INVALID_ARGUMENT",
// "details":[…]}}, with the canonical gRPC status name for the HTTP code.

// statusNames is the google.rpc status of each kind of error.
var statusNames = [...]string{
	codec.KindServer:            "INTERNAL",
	codec.KindInvalidRequest:    "INVALID_ARGUMENT",
	codec.KindAuthentication:    "UNAUTHENTICATED",
	codec.KindPermission:        "PERMISSION_DENIED",
	codec.KindNotFound:          "NOT_FOUND",
	codec.KindTooLarge:          "INVALID_ARGUMENT", // Google answers an oversized payload with 400 INVALID_ARGUMENT
	codec.KindRateLimitRequests: "RESOURCE_EXHAUSTED",
	codec.KindRateLimitTokens:   "RESOURCE_EXHAUSTED",
	codec.KindUpstream:          "UNAVAILABLE",
	codec.KindTimeout:           "DEADLINE_EXCEEDED",
	codec.KindUnavailable:       "UNAVAILABLE",
}

// defaultStatus is the HTTP status of each kind, for errors that carry none.
var defaultStatus = [...]int{
	codec.KindServer:            500,
	codec.KindInvalidRequest:    400,
	codec.KindAuthentication:    401,
	codec.KindPermission:        403,
	codec.KindNotFound:          404,
	codec.KindTooLarge:          413,
	codec.KindRateLimitRequests: 429,
	codec.KindRateLimitTokens:   429,
	codec.KindUpstream:          502,
	codec.KindTimeout:           504,
	codec.KindUnavailable:       503,
}

// statusKinds maps the google.rpc status names (all of them) to kinds, for
// errors whose HTTP status is not known (in a stream).
var statusKinds = map[string]codec.ErrorKind{
	"OK":                  codec.KindServer,
	"CANCELLED":           codec.KindServer,
	"UNKNOWN":             codec.KindServer,
	"INVALID_ARGUMENT":    codec.KindInvalidRequest,
	"DEADLINE_EXCEEDED":   codec.KindTimeout,
	"NOT_FOUND":           codec.KindNotFound,
	"ALREADY_EXISTS":      codec.KindInvalidRequest,
	"PERMISSION_DENIED":   codec.KindPermission,
	"RESOURCE_EXHAUSTED":  codec.KindRateLimitRequests,
	"FAILED_PRECONDITION": codec.KindInvalidRequest,
	"ABORTED":             codec.KindServer,
	"OUT_OF_RANGE":        codec.KindInvalidRequest,
	"UNIMPLEMENTED":       codec.KindNotFound,
	"INTERNAL":            codec.KindServer,
	"UNAVAILABLE":         codec.KindUnavailable,
	"DATA_LOSS":           codec.KindServer,
	"UNAUTHENTICATED":     codec.KindAuthentication,
}

// AppendError appends e in Gemini's shape. code is e.Status (or the usual
// status of e.Kind); status is e.Type when that is a google.rpc status name
// (an upstream Gemini error relayed), else the name for e.Kind. A
// machine-readable e.Code goes into a google.rpc.ErrorInfo detail's reason.
func AppendError(dst []byte, e *codec.Error) []byte {
	if e == nil {
		e = &codec.Error{Kind: codec.KindServer, Message: "internal error"}
	}
	kind := e.Kind
	if int(kind) >= len(statusNames) {
		kind = codec.KindServer
	}
	code, status := e.Status, statusNames[kind]
	if code == 0 {
		code = defaultStatus[kind]
	}
	if _, ok := statusKinds[e.Type]; ok {
		status = e.Type
	}
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = rawjson.AppendString(dst, e.Message)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, '"')
	if e.Code != "" || e.RateLimit.RetryAfter > 0 {
		dst = append(dst, `,"details":[`...)
		if e.Code != "" {
			dst = append(dst, `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":`...)
			dst = rawjson.AppendString(dst, e.Code)
			dst = append(dst, '}')
		}
		if d := e.RateLimit.RetryAfter; d > 0 {
			if e.Code != "" {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"`...)
			dst = strconv.AppendFloat(dst, d.Round(time.Millisecond).Seconds(), 'f', -1, 64)
			dst = append(dst, `s"}`...)
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}"...)
}

// AppendStreamError appends the SSE event that reports a failure after a
// stream started, as Gemini does: a data event holding the error object
// (then the stream ends). For the JSON-array form, append AppendError's
// output as the next element: Framing does.
func AppendStreamError(dst []byte, e *codec.Error) []byte {
	dst = append(dst, "data: "...)
	dst = AppendError(dst, e)
	return append(dst, "\r\n\r\n"...)
}

// DecodeError reads a Gemini error body returned with the given HTTP status
// (an array stream's body may wrap it in [ ]). ok is false when the body is
// not in Gemini's shape.
func DecodeError(status int, body []byte) (e codec.Error, ok bool) {
	p := parser{b: body}
	if p.peek() == '[' {
		l := p.array()
		if !p.elem(&l) {
			return codec.Error{}, false
		}
	}
	var kb [40]byte
	var errObj []byte
	l, isObj := p.object()
	if !isObj {
		return codec.Error{}, false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) == "error" && p.peek() == '{' {
			errObj = p.raw()
			continue
		}
		p.skip()
	}
	if p.err || errObj == nil {
		return codec.Error{}, false
	}
	if e = statusError(status, errObj); e.Message == "" && e.Type == "" {
		return codec.Error{}, false
	}
	return e, true
}

// statusError reads the "error" member of a google.rpc.Status body (a
// validated object). The status is the HTTP status when known, else the
// body's code. Strings are copied: errors outlive their buffers.
func statusError(status int, v []byte) codec.Error {
	var sd strDecoder
	var code int
	var message, name, reason string
	var retry time.Duration
	var kb [40]byte
	p := parser{b: v}
	l, _ := p.object()
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "code":
			code, _ = p.int()
		case "message":
			message, _ = p.str(&sd)
		case "status":
			name, _ = p.str(&sd)
		case "details":
			reason, retry = readDetails(&p, &sd)
		default:
			p.skip()
		}
	}
	if status == 0 {
		status = code
	}
	kind, known := statusKinds[name]
	switch {
	case status >= 400:
		kind = codec.KindForStatus(status)
	case known:
		status = defaultStatus[kind]
	default:
		kind, status = codec.KindServer, 500
	}
	return codec.Error{Status: status, Kind: kind, Message: strings.Clone(message),
		Type: strings.Clone(name), Code: strings.Clone(reason), RateLimit: codec.RateLimit{RetryAfter: retry}}
}

// readDetails returns the reason of the first detail that has one (a
// google.rpc.ErrorInfo) and the retryDelay of a google.rpc.RetryInfo.
func readDetails(p *parser, sd *strDecoder) (reason string, retry time.Duration) {
	var kb [40]byte
	details := p.array()
	for p.elem(&details) {
		l, ok := p.object()
		if !ok {
			continue
		}
		for k, more := p.key(&l); more; k, more = p.key(&l) {
			switch string(fold(&kb, k)) {
			case "reason":
				if r, ok := p.str(sd); ok && reason == "" {
					reason = r
				}
			case "retrydelay":
				if d, ok := p.str(sd); ok {
					retry, _ = time.ParseDuration(d)
				}
			default:
				p.skip()
			}
		}
	}
	return reason, retry
}
