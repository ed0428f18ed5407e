package testutil_test

import (
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestJSONStreamError(t *testing.T) {
	f := func(out string, done bool, want string) {
		t.Helper()
		if got := testutil.JSONStreamError([]byte(out), done); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("JSONStreamError(%q, %v) = %q, want %q…", out, done, got, want)
		}
	}
	f("", true, "")
	f("data: {\"a\":1}\n\ndata: {}\r\n\r\ndata: [DONE]\n\n", true, "")
	f("data: {}\n\ndata: {}\n\n", false, "")
	f("data: {}\n\ndata: [DONE]\n\n", false, "not a JSON object")
	f("data: [DONE]\n\ndata: {}\n\n", true, "events after [DONE]")
	f("data: {}\n\ndata: {}\n", true, "unterminated SSE event")
	f("data: {}\ndata: {}\n\n", true, "not a single data line")
	f("event: x\ndata: {}\n\n", true, "not a single data line")
	f(": comment\n\n", true, "not a single data line")
	f("data:{}\n\n", true, "not a single data line")
	f("data: [1]\n\n", true, "not a JSON object")
	f("data: {\n\n", true, "not a JSON object")
}

func TestAnthropicStreamError(t *testing.T) {
	ev := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
	}
	start, stop := ev("message_start", ""), ev("message_stop", "")
	block := ev("content_block_start", `,"index":0`) + ev("content_block_delta", `,"index":0`) + ev("content_block_stop", `,"index":0`)
	f := func(out, want string) {
		t.Helper()
		if got := testutil.AnthropicStreamError([]byte(out)); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("AnthropicStreamError(%q) = %q, want %q…", out, got, want)
		}
	}
	f(start+block+ev("message_delta", "")+stop, "")
	f(start+ev("error", ""), "")
	f("", "empty")
	f(start+block+stop[:len(stop)-1], "unterminated event")
	f(start+"data: {\"type\":\"message_stop\"}\n\n", "not one named event")
	f(start+"event: message_stop\ndata: {\"type\":\"message_delta\"}\n\n", "data is not JSON of the event's type")
	f(start+stop+stop, "event after the end")
	f(start+start+stop, "second message_start")
	f(start+ev("content_block_start", `,"index":1`)+stop, "block start out of order")
	f(start+ev("content_block_delta", `,"index":0`)+stop, "delta or stop of a block not open")
	f(start+ev("content_block_start", `,"index":0`)+stop, "message_stop before message_start or with blocks open")
	f(start+ev("ping", "")+stop, "unexpected event ping")
	f(start+block, "the stream does not end with message_stop or error")
}
