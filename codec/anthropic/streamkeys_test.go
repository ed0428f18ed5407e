package anthropic_test

import (
	"bytes"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// repeatedKeyStreams are message_start and message_delta events whose
// message, model and usage are repeated, spelled with escapes, or nested
// where they do not count, with the usage a client's JSON parser reads
// from them (the last occurrence of a key, decoded, whole).
var repeatedKeyStreams = []struct {
	start, delta string
	want         codec.Usage
}{
	{msgStart(`"model":"up1","usage":{"input_tokens":5,"output_tokens":1},"us\u0061ge":{"input_tokens":20,"output_tokens":1},"mod\u0065l":"up2"`),
		msgDelta(`"usage":{"output_tokens":5,"input_tokens":100},"us\u0061ge":{"output_tokens":7}`), codec.Usage{Input: 20, Output: 7}},
	{msgStart(`"model":"up1","usage":{"input_tokens":5,"output_tokens":1}},"message":{"id":"m2","model":"up2","usage":{"input_tokens":9,"output_tokens":1}`),
		msgDelta(`"usage":{"output_tokens":"x","output_tokens":7}`), codec.Usage{Input: 9, Output: 7}},
	{msgStart(`"model":"up1","usage":{"input_tokens":5,"cache_read_input_tokens":4,"output_tokens":1},"usage":{"input_tokens":6,"output_tokens":1}`),
		msgDelta(`"usage":{"output_tokens":7},"x":{"usage":{"output_tokens":99}}`), codec.Usage{Input: 6, Output: 7}},
	{msgStart(`"model":"up\u0031","usage":{"input_tokens":5,"output_tokens":1}`),
		msgDelta(`"usage":{"output_tokens":3,"output_tokens_details":{"thinking_tokens":9}},"usage":{"output_t\u006fkens":4}`),
		codec.Usage{Input: 5, Output: 4}},
	{msgStart(`"x":1},"message":{"id":"m2","model":"up1","usage":{"input_tokens":3,"output_tokens":1}`),
		msgDelta(`"usage":{"output_tokens":7}`), codec.Usage{Input: 3, Output: 7}}, // the first message has no usage
	{msgStart(`"model":"up1","usage":{"input_tokens":5,"output_tokens":1}},"message":null,"x":{`),
		msgDelta(`"usage":{"output_tokens":7}`), codec.Usage{Output: 7}},
}

// firstInputTokens is the message_start's input tokens that a parser
// that takes the first of a repeated key reads (anthropic-sdk-go).
func firstInputTokens(data []byte) int {
	ev, _ := testutil.FirstWins(data).(map[string]any)
	msg, _ := ev["message"].(map[string]any)
	u, _ := msg["usage"].(map[string]any)
	n, _ := u["input_tokens"].(float64)
	return int(n)
}

func msgStart(message string) string {
	return `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"stop_reason":null,` + message + `}}`
}

func msgDelta(members string) string {
	return `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},` + members + `}`
}

// namedEvent is one event of a stream.
func namedEvent(name, data string) []byte {
	return []byte("event: " + name + "\ndata: " + data + "\n\n")
}

// TestStreamAsClientsRead: the translating decoder and the relay read the
// usage a client reads, and the relay renames every model in the
// message, the one a client reads and any before it.
func TestStreamAsClientsRead(t *testing.T) {
	for _, c := range repeatedKeyStreams {
		var d anthropic.StreamDecoder
		evs, err := d.Decode(nil, []byte("message_start"), []byte(c.start))
		if err == nil {
			evs, err = d.Decode(evs, []byte("message_delta"), []byte(c.delta))
		}
		var u codec.Usage
		for _, e := range evs {
			if e.Kind == codec.EventUsage {
				u = e.Usage
			}
		}
		if err != nil || u != c.want {
			t.Errorf("Decode(%s, %s): usage %+v, %v; want %+v", c.start, c.delta, u, err, c.want)
		}

		r := codec.Relay{Model: "pub", Dec: anthropic.Dialect.NewStreamDecoder()}
		var out []byte
		for _, ev := range [][]byte{namedEvent("message_start", c.start), namedEvent("message_delta", c.delta)} {
			if out, err = anthropic.Dialect.RelayEvent(out, ev, ev[bytes.Index(ev, []byte("data: "))+6:len(ev)-2], &r); err != nil {
				t.Fatal(err)
			}
		}
		if r.Usage != c.want || bytes.Contains(out, []byte(`"up`)) {
			t.Errorf("relayed %s: usage %+v; want %+v", out, r.Usage, c.want)
		}
		start := out[bytes.Index(out, []byte("data: "))+6 : bytes.Index(out, []byte("\n\n"))]
		if in := firstInputTokens(start); in != c.want.Input {
			t.Errorf("relayed %s: a first-wins parser reads %d input tokens, want %d", start, in, c.want.Input)
		}
		for _, v := range []any{testutil.FirstWins(start), testutil.LastWins(start)} {
			ev, _ := v.(map[string]any)
			if msg, ok := ev["message"].(map[string]any); ok && msg["model"] != "pub" {
				t.Errorf("relayed %s: a reader reads the message's model %v", start, msg["model"])
			}
		}
		checkModelKept(t, c.start)
	}
}

// checkModelKept: a message_start relayed with the upstream's model kept
// (Relay.Model "") names one model to every reader where its last message
// is an object (else the readers differ on the message, not its model).
func checkModelKept(t *testing.T, data string) {
	t.Helper()
	r := codec.Relay{Dec: anthropic.Dialect.NewStreamDecoder()}
	ev := namedEvent("message_start", data)
	out, err := anthropic.Dialect.RelayEvent(nil, ev, ev[len("event: message_start\ndata: "):len(ev)-2], &r)
	if err != nil {
		t.Fatal(err)
	}
	out = out[len("event: message_start\ndata: ") : len(out)-2]
	model := func(v any) any {
		ev, _ := v.(map[string]any)
		msg, ok := ev["message"].(map[string]any)
		return [2]any{msg["model"], ok}
	}
	last := testutil.LastWins(out)
	if last == nil || model(last) != model(testutil.FirstWins(out)) && model(last).([2]any)[1] == true {
		t.Errorf("relayed %s with its model kept as %s: a first-wins parser reads model %v, a last-wins one %v", data, out, model(testutil.FirstWins(out)), model(last))
	}
}

// TestReadRelayedAsClientsRead: a whole answer's model and usage are the
// last of each, keys decoded, where a repeated key refused the answer's
// usage before.
func TestReadRelayedAsClientsRead(t *testing.T) {
	body := `{"id":"m","type":"message","model":"up1","usage":{"input_tokens":1,"output_tokens":1},"content":[],` +
		`"mod\u0065l":"up2","us\u0061ge":{"input_tokens":7,"output_tokens":"x","output_tokens":8}}`
	r, ok := anthropic.Dialect.ReadRelayed([]byte(body))
	if !ok || !r.HasUsage || r.Usage != (codec.Usage{Input: 7, Output: 8}) || body[r.ModelStart:r.ModelEnd] != "up2" {
		t.Errorf("ReadRelayed(%s) = %+v, %v", body, r, ok)
	}
}

// TestDeltaNamedOtherType: a message_delta sent under the name
// content_block_delta reports its usage, as the SDKs read it by its type.
func TestDeltaNamedOtherType(t *testing.T) {
	var d anthropic.StreamDecoder
	evs, err := d.Decode(nil, []byte("message_start"), []byte(msgStart(`"model":"m","usage":{"input_tokens":5,"output_tokens":1}`)))
	if err == nil {
		evs, err = d.Decode(evs, []byte("content_block_delta"), []byte(msgDelta(`"usage":{"output_tokens":42}`)))
	}
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Kind != codec.EventUsage || evs[len(evs)-1].Usage != (codec.Usage{Input: 5, Output: 42}) {
		t.Errorf("Decode: %+v, %v", evs, err)
	}
}

// TestRelayDeltaNamedOtherType: the relay reads and renames a
// message_start and a message_delta sent under the name
// content_block_delta, which the SDKs read by their type.
func TestRelayDeltaNamedOtherType(t *testing.T) {
	r := codec.Relay{Model: "pub", Dec: anthropic.Dialect.NewStreamDecoder()}
	var out []byte
	for _, data := range []string{msgStart(`"model":"up1","usage":{"input_tokens":5,"output_tokens":1}`), msgDelta(`"usage":{"output_tokens":42}`)} {
		ev := namedEvent("content_block_delta", data)
		var err error
		if out, err = anthropic.Dialect.RelayEvent(out, ev, ev[len("event: content_block_delta\ndata: "):len(ev)-2], &r); err != nil {
			t.Fatal(err)
		}
	}
	if r.Usage != (codec.Usage{Input: 5, Output: 42}) || bytes.Contains(out, []byte(`"up1"`)) {
		t.Errorf("relayed %s, usage %+v", out, r.Usage)
	}
}

// misnamedEvents are events whose SSE name is not their data's type,
// which the SDKs read by the type (but for ping and error), with the
// usage (none: zero) and the number of canonical events a reader of the
// type finds after a message_start of 5 input tokens and an open text
// block.
var misnamedEvents = []struct {
	name, data string
	want       codec.Usage
	events     int
}{
	{"message_stop", msgDelta(`"usage":{"output_tokens":42}`), codec.Usage{Input: 5, Output: 42}, 2},
	{"content_block_stop", msgDelta(`"usage":{"output_tokens":42}`), codec.Usage{Input: 5, Output: 42}, 2},
	{"message_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, codec.Usage{}, 1},
	{"content_block_start", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, codec.Usage{}, 1},
	{"content_block_stop", `{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}`, codec.Usage{}, 1},
	{"ping", msgDelta(`"usage":{"output_tokens":42}`), codec.Usage{}, 0},
	// anthropic-sdk-go's Stream.Next fails on an event named error
	// whatever its data: nothing in it is billed or shown.
	{"error", msgDelta(`"usage":{"output_tokens":42}`), codec.Usage{}, 1},
	{"error", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, codec.Usage{}, 1},
}

// TestMisnamedEvents: the translating decoder and the relay read an event
// by its data's type, as the SDKs do (but a ping, skipped, and an error, a
// failure): the usage a client reads is billed, a delta a client shows is
// translated.
func TestMisnamedEvents(t *testing.T) {
	start := msgStart(`"model":"up1","usage":{"input_tokens":5,"output_tokens":0}`)
	block := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	for _, c := range misnamedEvents {
		var d anthropic.StreamDecoder
		var evs []codec.Event
		var err error
		for _, e := range [][2]string{{"message_start", start}, {"content_block_start", block}} {
			if _, err = d.Decode(nil, []byte(e[0]), []byte(e[1])); err != nil {
				t.Fatal(err)
			}
		}
		evs, err = d.Decode(nil, []byte(c.name), []byte(c.data))
		var u codec.Usage
		for _, e := range evs {
			if e.Kind == codec.EventUsage {
				u = e.Usage
			}
		}
		if err != nil || len(evs) != c.events || u != c.want || c.name == "error" && evs[0].Kind != codec.EventError {
			t.Errorf("Decode(%s, %s) = %+v, %v; want %d events", c.name, c.data, evs, err, c.events)
		}

		r := codec.Relay{Model: "pub", Dec: anthropic.Dialect.NewStreamDecoder()}
		var out []byte
		for _, e := range [][2]string{{"message_start", start}, {"content_block_start", block}, {c.name, c.data}} {
			ev := namedEvent(e[0], e[1])
			if out, err = anthropic.Dialect.RelayEvent(out, ev, ev[bytes.Index(ev, []byte("data: "))+6:len(ev)-2], &r); err != nil {
				t.Fatal(err)
			}
		}
		if r.Usage != c.want || !bytes.HasSuffix(out, namedEvent(c.name, c.data)) {
			t.Errorf("relayed %s %s: usage %+v, want %+v; out %s", c.name, c.data, r.Usage, c.want, out)
		}
	}
}

// TestRelayLastMessageNotObject: a message_start whose last message is no
// object, which the translating decoder refuses, or whose last type is
// another (the SDKs read the first), is relayed with no model nor usage
// left in a message for a reader of the first.
func TestRelayLastMessageNotObject(t *testing.T) {
	for _, data := range []string{
		`{"type":"message_start","message":{"model":"up1","usage":{"input_tokens":5}},"message":1}`,
		`{"type":"message_start","message":{"model":"up1","usage":{"input_tokens":0}},"type":"ping"}`,
		`{"type":"message_start","message":{"model":"up1","usage":{"input_tokens":0}},"type":"content_block_delta"}`,
	} {
		r := codec.Relay{Model: "pub", Dec: anthropic.Dialect.NewStreamDecoder()}
		ev := namedEvent("message_start", data)
		out, err := anthropic.Dialect.RelayEvent(nil, ev, ev[len("event: message_start\ndata: "):len(ev)-2], &r)
		if data := out[len("event: message_start\ndata: ") : len(out)-2]; err != nil || bytes.Contains(out, []byte("up1")) || firstInputTokens(data) != 0 {
			t.Errorf("relayed %s, %v", out, err)
		}
	}
}
