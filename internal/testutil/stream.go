package testutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// JSONStreamError checks that out is a sequence of complete SSE events,
// each a single "data: " line holding a JSON object, as the OpenAI and
// Gemini styles stream; with done, an OpenAI "[DONE]" may end it, as its
// last event. It returns what is wrong with out, or "" when nothing is.
func JSONStreamError(out []byte, done bool) string {
	for b := out; len(b) > 0; {
		n := sse.Next(b)
		if n == 0 {
			return "unterminated SSE event: " + strconv.Quote(string(b))
		}
		ev := b[:n]
		b = b[n:]
		data, multi, ok := sse.Data(ev)
		switch {
		case !ok || multi || !bytes.HasPrefix(ev, []byte("data: ")):
			return "not a single data line: " + strconv.Quote(string(ev))
		case done && sse.IsDone(data):
			if len(b) > 0 {
				return "events after [DONE]: " + strconv.Quote(string(b))
			}
		case !json.Valid(data) || data[0] != '{':
			return "not a JSON object: " + strconv.Quote(string(ev))
		}
	}
	return ""
}

// CheckOpenAISSE fails t unless out is well-formed OpenAI SSE: "data: "
// lines with a JSON object each, [DONE] only last (JSONStreamError).
func CheckOpenAISSE(t testing.TB, out []byte) {
	t.Helper()
	if p := JSONStreamError(out, true); p != "" {
		t.Fatalf("not an OpenAI stream: %s", p)
	}
}

// AnthropicStreamError checks that out is a well-formed Anthropic stream, as
// its encoder writes one: named events whose data is a JSON object of the
// same type, message_start first, block starts in index order, every delta
// and stop for an open block, message_delta and message_stop with no block
// open, and message_stop (or error) last. A ping is not expected: the
// encoder writes none. It returns what is wrong with out, or "" when
// nothing is.
func AnthropicStreamError(out []byte) string {
	if len(out) == 0 {
		return "empty"
	}
	started, blocks, last := false, 0, ""
	open := map[int]bool{}
	for len(out) > 0 {
		n := sse.Next(out)
		if n == 0 {
			return "unterminated event"
		}
		ev := out[:n]
		out = out[n:]
		name, okName := sse.Field(ev, "event")
		data, multi, okData := sse.Data(ev)
		var m struct {
			Type  string `json:"type"`
			Index *int   `json:"index"`
		}
		switch {
		case !okName || !okData || multi:
			return "not one named event with one data line: " + string(ev)
		case json.Unmarshal(data, &m) != nil || m.Type != string(name):
			return "data is not JSON of the event's type: " + string(ev)
		case last == "message_stop" || last == "error":
			return "event after the end: " + string(ev)
		}
		switch m.Type {
		case "message_start":
			if started {
				return "second message_start"
			}
			started = true
		case "content_block_start":
			if !started || m.Index == nil || *m.Index != blocks {
				return "block start out of order: " + string(data)
			}
			open[blocks] = true
			blocks++
		case "content_block_delta", "content_block_stop":
			if m.Index == nil || !open[*m.Index] {
				return "delta or stop of a block not open: " + string(data)
			}
			if m.Type == "content_block_stop" {
				delete(open, *m.Index)
			}
		case "message_delta", "message_stop":
			if !started || len(open) > 0 {
				return m.Type + " before message_start or with blocks open"
			}
		case "error":
		default:
			return "unexpected event " + m.Type
		}
		last = m.Type
	}
	if last != "message_stop" && last != "error" {
		return "the stream does not end with message_stop or error"
	}
	return ""
}

// JSONArray returns the elements of b, a stream in Gemini's JSON-array
// framing, and fails t unless b is one valid JSON array.
func JSONArray(t testing.TB, b []byte) []json.RawMessage {
	t.Helper()
	// An element at a time, each checked by itself: an element nested as
	// deep as encoding/json allows is a level deeper in the array, and
	// the array JSON still (ValidJSON), which json.Unmarshal refuses.
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('[') {
		t.Fatalf("the array stream is not a JSON array: %v\n%s", err, b)
	}
	var elems []json.RawMessage
	for d.More() {
		var e json.RawMessage
		if err := d.Decode(&e); err != nil {
			t.Fatalf("the array stream is not a JSON array: %v\n%s", err, b)
		}
		elems = append(elems, e)
	}
	if tok, err := d.Token(); err != nil || tok != json.Delim(']') {
		t.Fatalf("the array stream is not a JSON array: %v\n%s", err, b)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("the array stream goes on after its array: %v\n%s", err, b)
	}
	return elems
}
