package anthropic_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
)

// TestErrorTypes: every kind has the type Anthropic uses for its status
// (platform.claude.com/docs/en/api/errors), and the types map back.
func TestErrorTypes(t *testing.T) {
	f := func(kind codec.ErrorKind, status int, typ string, back codec.ErrorKind) {
		t.Helper()
		if got := anthropic.ErrorType(&codec.Error{Kind: kind}); got != typ {
			t.Errorf("ErrorType(%v) = %q, want %q", kind, got, typ)
		}
		if got := anthropic.KindForType(typ, status); got != back {
			t.Errorf("KindForType(%q, %d) = %v, want %v", typ, status, got, back)
		}
	}
	f(codec.KindInvalidRequest, 400, "invalid_request_error", codec.KindInvalidRequest)
	f(codec.KindAuthentication, 401, "authentication_error", codec.KindAuthentication)
	f(codec.KindPermission, 403, "permission_error", codec.KindPermission)
	f(codec.KindNotFound, 404, "not_found_error", codec.KindNotFound)
	f(codec.KindTooLarge, 413, "request_too_large", codec.KindTooLarge)
	f(codec.KindRateLimitRequests, 429, "rate_limit_error", codec.KindRateLimitRequests)
	f(codec.KindRateLimitTokens, 429, "rate_limit_error", codec.KindRateLimitRequests)
	f(codec.KindServer, 500, "api_error", codec.KindServer)
	f(codec.KindUpstream, 502, "api_error", codec.KindServer)
	f(codec.KindUnavailable, 503, "overloaded_error", codec.KindUnavailable)
	f(codec.KindTimeout, 504, "timeout_error", codec.KindTimeout)
	if got := anthropic.KindForType("billing_error", 402); got != codec.KindInvalidRequest {
		t.Errorf("billing_error → %v", got)
	}
	if got := anthropic.ErrorType(&codec.Error{Kind: codec.KindServer, Type: "billing_error"}); got != "billing_error" {
		t.Errorf("an upstream's own type is not kept: %q", got)
	}
	if got := anthropic.ErrorType(&codec.Error{Kind: codec.KindUnavailable, Type: "UNAVAILABLE"}); got != "overloaded_error" {
		t.Errorf("another style's type is relayed: %q", got)
	}
}

func TestAppendError(t *testing.T) {
	f := func(e codec.Error, requestID, want string) {
		t.Helper()
		if got := string(anthropic.AppendErrorRequestID(nil, &e, requestID)); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	f(codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Message: "max_tokens: Field required"}, "",
		`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`)
	f(codec.Error{Status: 529, Kind: codec.KindUnavailable, Message: "Overloaded"}, "req_011CSHoEeqs5C35K2UUqR7Fy",
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
	f(codec.Error{Status: 401, Kind: codec.KindAuthentication, Message: "invalid \"x-api-key\""}, "",
		`{"type":"error","error":{"type":"authentication_error","message":"invalid \"x-api-key\""}}`)
	e := codec.Error{Status: 504, Kind: codec.KindTimeout, Message: "Upstream timed out."}
	if got, want := string(anthropic.AppendStreamError(nil, &e)),
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"timeout_error\",\"message\":\"Upstream timed out.\"}}\n\n"; got != want {
		t.Errorf("AppendStreamError = %q, want %q", got, want)
	}
}

func TestDecodeError(t *testing.T) {
	f := func(status int, body string, want codec.Error, wantID string) {
		t.Helper()
		e, id, ok := anthropic.DecodeErrorRequestID(status, []byte(body))
		if !ok || e != want || id != wantID {
			t.Errorf("DecodeErrorRequestID(%d, %s) = %+v, %q, %v", status, body, e, id, ok)
		}
	}
	f(400, string(readFile(t, wireDir+"/error_400.json")), codec.Error{Status: 400, Kind: codec.KindInvalidRequest,
		Message: "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
		Type:    "invalid_request_error"}, "req_011CWxR4tN8mVq2bYz7LsKc3")
	f(529, string(readFile(t, wireDir+"/error_529.json")), codec.Error{Status: 529, Kind: codec.KindUnavailable,
		Message: "Overloaded", Type: "overloaded_error"}, "req_011CWxS9pQ3nHd6vEa1YtJm8")
	f(402, `{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low."}}`,
		codec.Error{Status: 402, Kind: codec.KindInvalidRequest, Message: "Your credit balance is too low.", Type: "billing_error"}, "")
	for _, body := range []string{``, `{}`, `{"error":{"message":"OpenAI shape","type":"server_error"}}`, `{"type":"error"}`, `<html>`} {
		if _, ok := anthropic.DecodeError(500, []byte(body)); ok {
			t.Errorf("DecodeError accepted %s", body)
		}
	}
}
