package fuzz

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/codec/responses"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// FuzzResponsesStreamDeltas: the Responses stream encoder (codec/responses)
// writes any deltas, of any bytes, as the JSON rawjson.AppendString writes
// them, whether or not they are marked plain: each delta event holds its
// delta so and ends as its type ends; every event is a JSON object with
// its sequence number in turn; the closing events of a text or reasoning
// item hold the whole text so, however long (the deltas are repeated up
// to 64 times, past the 64 KiB an encoder keeps as its own); and the same
// encoder, reset, writes the same stream again.
func FuzzResponsesStreamDeltas(f *testing.F) {
	f.Add([]byte("Hello, world! \"quoted\" \\ é\n\x00 \xff\xfe €"), []byte{3, 5, 9, 1, 0, 200}, byte(0), byte(1))
	f.Add([]byte(`{"city":"Paris","units":"metric"}`), []byte{4, 7}, byte(2), byte(3))
	f.Add([]byte("thinking about it step by step"), []byte{6}, byte(1|4), byte(63))
	f.Fuzz(func(t *testing.T, text, cuts []byte, mode, rounds byte) {
		if len(text) > 4<<10 {
			return
		}
		deltas := cutDeltas(text, cuts)
		kind := [...]codec.PartKind{codec.PartText, codec.PartThinking, codec.PartToolCall}[int(mode&3)%3]
		events, whole := deltaEvents(deltas, kind, mode&4 != 0, int(rounds%64)+1)
		var e responses.StreamEncoder
		out := encodeResponses(&e, events)
		checkResponsesEvents(t, out, events, kind)
		if kind != codec.PartToolCall && len(whole) > 0 {
			if n := bytes.Count(out, append([]byte(`"text":`), rawjson.AppendString(nil, string(whole))...)); n < 2 {
				t.Fatalf("the whole text of %d bytes is in %d closing events", len(whole), n)
			}
		}
		if again := encodeResponses(&e, events); !bytes.Equal(again, out) {
			t.Fatal("the reset encoder writes the stream otherwise")
		}
	})
}

// cutDeltas cuts text into deltas of the lengths cuts gives in turn (a
// zero: an empty delta), the last taking what is left.
func cutDeltas(text, cuts []byte) [][]byte {
	var deltas [][]byte
	for _, c := range cuts {
		n := min(int(c), len(text))
		deltas, text = append(deltas, text[:n]), text[n:]
	}
	return append(deltas, text)
}

// deltaEvents is a stream of one block of kind whose deltas are deltas,
// rounds times over, and its whole text. markPlain: a delta that needs no
// escape is marked Plain, as a decoder that checked it marks it.
func deltaEvents(deltas [][]byte, kind codec.PartKind, markPlain bool, rounds int) ([]codec.Event, []byte) {
	events := []codec.Event{{Kind: codec.EventStart}, {Kind: codec.EventBlockStart, Block: kind, ID: "call_1", Name: "f"}}
	var whole []byte
	for range rounds {
		for _, d := range deltas {
			ev := codec.Event{Kind: codec.EventDelta, Block: kind}
			if kind == codec.PartToolCall {
				ev.Arguments = string(d)
			} else {
				ev.Text = string(d)
				ev.Plain = markPlain && bytes.Equal(rawjson.AppendEscaped(nil, ev.Text), d)
			}
			events = append(events, ev)
			whole = append(whole, d...)
		}
	}
	return append(events, codec.Event{Kind: codec.EventBlockStop}, codec.Event{Kind: codec.EventFinish, Stop: codec.StopEnd}), whole
}

func encodeResponses(e *responses.StreamEncoder, events []codec.Event) []byte {
	e.Reset(codec.StreamInfo{ID: "resp_1", Model: "m", Created: 1})
	var out []byte
	for i := range events {
		out = e.Encode(out, &events[i])
	}
	return e.End(out)
}

// checkResponsesEvents checks that out's events are JSON objects numbered
// in turn, and that its delta events are the non-empty deltas of events,
// each written as rawjson.AppendString writes it and ended as its type is.
func checkResponsesEvents(t *testing.T, out []byte, events []codec.Event, kind codec.PartKind) {
	t.Helper()
	end := []byte(`,"sequence_number":`)
	if kind == codec.PartText {
		end = []byte(`,"logprobs":[],"sequence_number":`)
	}
	next := 0 // the next delta event's delta in events
	for seq := 0; len(out) > 0; seq++ {
		n := sse.Next(out)
		data, _, _ := sse.Data(out[:n])
		out = out[n:]
		var ev struct {
			Type           string
			SequenceNumber int `json:"sequence_number"`
		}
		if err := json.Unmarshal(data, &ev); err != nil || ev.SequenceNumber != seq {
			t.Fatalf("event %d (%v): %s", seq, err, data)
		}
		if !bytes.HasSuffix([]byte(ev.Type), []byte(".delta")) {
			continue
		}
		for next < len(events) && events[next].Text == "" && events[next].Arguments == "" {
			next++
		}
		if next == len(events) {
			t.Fatalf("a delta event more than the deltas: %s", data)
		}
		want := append([]byte(`"delta":`), rawjson.AppendString(nil, events[next].Text+events[next].Arguments)...)
		if !bytes.Contains(data, append(want, end...)) {
			t.Fatalf("delta %q is not written as AppendString writes it: %s", events[next].Text+events[next].Arguments, data)
		}
		next++
	}
	for ; next < len(events); next++ {
		if events[next].Text != "" || events[next].Arguments != "" {
			t.Fatalf("delta %q has no event", events[next].Text+events[next].Arguments)
		}
	}
}
