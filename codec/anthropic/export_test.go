package anthropic

import "github.com/rosetta-gateway/rosetta/codec"

// What only the external tests use: the 2023-06-01 forms of the request
// codecs, a ping event, and the error codecs with a request_id.

// DecodeRequest reads a Messages request of API version 2023-06-01 into r
// (DecodeRequestOptions with the zero Options).
func DecodeRequest(body []byte, r *codec.Request) *codec.Error {
	return DecodeRequestOptions(body, r, Options{})
}

// AppendRequest appends the Messages request body for an upstream of API
// version 2023-06-01 (AppendRequestOptions with the zero Options).
func AppendRequest(dst []byte, r *codec.Request) ([]byte, []string, *codec.Error) {
	return AppendRequestOptions(dst, r, Options{})
}

// AppendPing appends a ping event, which keeps an idle connection open.
func AppendPing(dst []byte) []byte {
	return append(dst, "event: ping\ndata: {\"type\": \"ping\"}\n\n"...)
}

// AppendErrorRequestID exposes appendErrorRequestID to the external tests.
func AppendErrorRequestID(dst []byte, e *codec.Error, requestID string) []byte {
	return appendErrorRequestID(dst, e, requestID)
}

// DecodeErrorRequestID exposes decodeErrorRequestID to the external tests.
func DecodeErrorRequestID(status int, body []byte) (e codec.Error, requestID string, ok bool) {
	return decodeErrorRequestID(status, body)
}
