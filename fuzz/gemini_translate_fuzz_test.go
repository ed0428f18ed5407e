package fuzz

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// Black-box fuzz targets for codec/gemini: the decoders never panic and
// accept only valid JSON; what the encoders write is valid JSON (valid SSE
// for streams) that decodes again, and encoding what that decodes to gives
// the same bytes (one decode → encode normalises; the next is a fixed
// point); stream decoding does not depend on read boundaries.

const geminiMaxInput = 64 << 10

func FuzzGeminiRequest(f *testing.F) {
	seedFiles(f, "../codec/gemini/testdata/request/*.in.json", "../codec/testdata/wire/gemini/generate_request*.json",
		"../codec/gemini/testdata/request_encode/*.out.json", "../codec/gemini/testdata/chat_2kb.json")
	f.Add([]byte(`{"system_instruction":{"parts":{"text":"s"}},"contents":{"parts":{"text":"hi"}},"generation_config":{"max_output_tokens":"5"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > geminiMaxInput {
			return
		}
		var r codec.Request
		if err := gemini.DecodeRequest(body, &r); err != nil {
			if err.Status != 400 {
				t.Fatalf("DecodeRequest(%q) = %+v: not a 400", body, err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("DecodeRequest accepted invalid JSON %q", body)
		}
		out, _, err := gemini.AppendRequest(nil, &r)
		if err != nil {
			return // a canonical request Gemini cannot take (an invalid schema…)
		}
		geminiRequestFixedPoint(t, body, out)
	})
}

// geminiRequestFixedPoint checks that out, an encoder's output, is valid
// JSON, decodes, and encodes back to itself (when it nests no deeper than
// the decoder goes).
func geminiRequestFixedPoint(t *testing.T, in, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		// The encoder wraps what Gemini's clients may send bare (a tool,
		// its declarations), so that a schema the decoder took at
		// encoding/json's nesting limit comes out deeper: JSON still, if
		// past the limit the decoder holds to as well, so that there is
		// no fixed point to check.
		if !testutil.ValidJSON(out) {
			t.Fatalf("AppendRequest of %q wrote invalid JSON %q", in, out)
		}
		return
	}
	var r codec.Request
	if err := gemini.DecodeRequest(out, &r); err != nil {
		t.Fatalf("the output %q of %q does not decode: %v", out, in, err)
	}
	again, _, err := gemini.AppendRequest(nil, &r)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("encode(decode(out)) != out for %q:\n%s\n%s (%v)", in, out, again, err)
	}
}

func FuzzGeminiResponse(f *testing.F) {
	seedFiles(f, "../codec/gemini/testdata/response/*.in.json", "../codec/testdata/wire/gemini/*response*.json",
		"../codec/gemini/testdata/response_encode/*.out.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > geminiMaxInput {
			return
		}
		var resp codec.Response
		if err := gemini.DecodeResponse(body, &resp); err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("DecodeResponse accepted invalid JSON %q", body)
		}
		out := gemini.AppendResponse(nil, &resp, codec.StreamInfo{})
		if !json.Valid(out) {
			t.Fatalf("AppendResponse of %q wrote invalid JSON %q", body, out)
		}
		var resp2 codec.Response
		if err := gemini.DecodeResponse(out, &resp2); err != nil {
			t.Fatalf("the output %q of %q does not decode: %v", out, body, err)
		}
		if again := gemini.AppendResponse(nil, &resp2, codec.StreamInfo{}); !bytes.Equal(again, out) {
			t.Fatalf("encode(decode(out)) != out for %q:\n%s\n%s", body, out, again)
		}
	})
}

// geminiDecodeSSE decodes an SSE transcript delivered in two reads split at
// split, and returns the events (their strings copied) as JSON lines.
func geminiDecodeSSE(t *testing.T, in []byte, split int) ([]codec.Event, []byte) {
	var d gemini.StreamDecoder
	var events []codec.Event
	var buf []byte
	split = min(max(split, 0), len(in))
	for _, read := range [][]byte{in[:split], in[split:]} {
		buf = append(buf, read...)
		for {
			n := sse.Next(buf)
			if n == 0 {
				break
			}
			if data, multi, ok := sse.Data(buf[:n]); ok {
				if multi {
					data = sse.AppendData(nil, buf[:n])
				}
				from := len(events)
				events, _ = d.Decode(events, nil, data) // a malformed chunk is skipped
				geminiKeep(events[from:])
			}
			buf = buf[n:]
		}
	}
	events = d.End(events)
	var lines bytes.Buffer
	for i := range events {
		b, err := json.Marshal(&events[i])
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(b)
		lines.WriteByte('\n')
	}
	return events, lines.Bytes()
}

// geminiKeep copies the strings of events, valid only until the next Decode.
func geminiKeep(events []codec.Event) {
	for i := range events {
		e := &events[i]
		for _, s := range []*string{&e.ID, &e.Model, &e.Name, &e.Text, &e.Arguments, &e.Signature, &e.Data} {
			*s = strings.Clone(*s)
		}
	}
}

// geminiEncode encodes events for a Gemini client, in SSE or (array) in
// the JSON-array framing.
func geminiEncode(events []codec.Event, array bool) []byte {
	var f codec.Framing
	if array {
		f = gemini.Framing(true)
	}
	return testutil.EncodeStream(new(gemini.StreamEncoder), codec.StreamInfo{ID: "fuzz", Model: "m"}, events, f)
}

func FuzzGeminiStream(f *testing.F) {
	seedFiles(f, "../codec/gemini/testdata/stream/*.sse", "../codec/testdata/wire/gemini/*.sse",
		"../codec/gemini/testdata/stream_encode/*.out.sse")
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > geminiMaxInput {
			return
		}
		events, want := geminiDecodeSSE(t, in, len(in))
		for _, split := range []int{0, 1, len(in) / 3, len(in) / 2, len(in) - 1} {
			if _, got := geminiDecodeSSE(t, in, split); !bytes.Equal(got, want) {
				t.Fatalf("split at %d changes the events of %q:\n%s\nwant\n%s", split, in, got, want)
			}
		}
		out := geminiEncode(events, false)
		if p := testutil.JSONStreamError(out, false); p != "" {
			t.Fatalf("the stream of %q: %s", in, p)
		}
		again, _ := geminiDecodeSSE(t, out, len(out))
		if out2 := geminiEncode(again, false); !bytes.Equal(out2, out) {
			t.Fatalf("encode(decode(out)) != out for %q:\n%s\n%s", in, out, out2)
		}
		testutil.JSONArray(t, geminiEncode(events, true))
	})
}

func FuzzGeminiCallID(f *testing.F) {
	f.Add("gcall_abc_0", "CikBnKamKgWmIGus+dvD/sqA")
	f.Add("call_1", "YQ==")
	f.Add("toolu_01", "not base64")
	f.Add("gsigb3_abc_x", "")
	f.Fuzz(func(t *testing.T, id, sig string) {
		enc := gemini.EncodeCallID(id, sig)
		gotID, gotSig := gemini.DecodeCallID(enc)
		if sig != "" && (gotID != id || gotSig != sig) {
			t.Fatalf("DecodeCallID(EncodeCallID(%q, %q)) = %q, %q", id, sig, gotID, gotSig)
		}
		if sig != "" {
			for _, c := range enc[:len(enc)-len(id)] {
				if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
					t.Fatalf("EncodeCallID(%q, %q) = %q is not URL-safe", id, sig, enc)
				}
			}
		}
		// Any id decodes without panicking; one that does not look like an
		// encoded id decodes to itself.
		if i, s := gemini.DecodeCallID(id); !strings.HasPrefix(id, "gsig") && (s != "" || i != id) {
			t.Fatalf("DecodeCallID(%q) = %q, %q", id, i, s)
		}
		// codec/anthropic carries signatures in tool_use ids the same way:
		// each side reads what the other writes.
		if sig != "" && !strings.HasPrefix(id, "gsig") {
			if a := anthropic.EncodeToolID(id, sig); a != enc {
				t.Fatalf("EncodeCallID(%q, %q) = %q, anthropic.EncodeToolID = %q", id, sig, enc, a)
			}
		}
		ai, as := anthropic.DecodeToolID(enc)
		gi, gs := gemini.DecodeCallID(enc)
		if ai != gi || as != gs {
			t.Fatalf("%q: DecodeCallID = %q, %q; anthropic.DecodeToolID = %q, %q", enc, gi, gs, ai, as)
		}
	})
}

func FuzzGeminiError(f *testing.F) {
	seedFiles(f, "../codec/testdata/wire/gemini/error_*.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		e, ok := gemini.DecodeError(429, body)
		if !ok {
			return
		}
		out := gemini.AppendError(nil, &e)
		if !json.Valid(out) {
			t.Fatalf("AppendError(DecodeError(%q)) = %q: invalid JSON", body, out)
		}
		// Everything but the status name comes back (AppendError writes a
		// canonical one when the upstream's is missing or unknown).
		e2, ok := gemini.DecodeError(e.Status, out)
		e2.Type = e.Type
		if !utf8.ValidString(e.Message) || !utf8.ValidString(e.Code) {
			return // the encoder replaces invalid UTF-8, as encoding/json does
		}
		if !ok || e2 != e {
			t.Fatalf("DecodeError(AppendError(%+v)) = %+v, %v", e, e2, ok)
		}
	})
}

// FuzzGeminiStreamFastPath checks the stream decoder's fast path (a scanner
// for the common text chunk, and the replay of the last chunk's shape)
// against its general path, black-box: each line of the input is a chunk,
// decoded by one decoder as it is and by another with an unknown member
// added in front, which the general path skips and the fast path declines
// (codec/gemini's TestFastChunkDeclinesUnknownKeys holds it to that). The
// two must give the same events and errors, chunk by chunk. Synthesised
// call ids are left out of the comparison: without a responseId they hash
// the chunk's bytes, which differ.
func FuzzGeminiStreamFastPath(f *testing.F) {
	for _, p := range seedPaths(f, "../codec/gemini/testdata/stream/*.sse", "../codec/testdata/wire/gemini/*.sse",
		"../codec/testdata/in/gemini/*.sse") {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var lines []byte
		for len(b) > 0 {
			n := sse.Next(b)
			if n == 0 {
				break
			}
			lines = append(sse.AppendData(lines, b[:n]), '\n')
			b = b[n:]
		}
		f.Add(lines)
	}
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"responseId":"r"}` + "\n" +
		`{"candidates":[{"content":{"parts":[{"text":"b\u00e9"}]}}],"responseId":"r"}` + "\n" +
		`{"candidates":[{"content":{"parts":[{"text":"c","thought":true}]}}],"responseId":"r"}` + "\n" +
		`{"candidates":[{"content":{"parts":[{"text":"d","thought":true}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3}}`))
	// Cut short after chunks of one shape: End reports the last one's usage.
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}}` + "\n" +
		`{"candidates":[{"content":{"parts":[{"text":"b"}]}}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2}}` + "\n" +
		`{"candidates":[{"content":{"parts":[{"text":"c"}]}}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":3}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > geminiMaxInput {
			return
		}
		var fast, slow gemini.StreamDecoder
		var a, b []codec.Event
		for _, chunk := range bytes.Split(in, []byte("\n")) {
			var errA, errB error
			a, errA = fast.Decode(a[:0], nil, chunk)
			b, errB = slow.Decode(b[:0], nil, geminiSlowChunk(chunk))
			if (errA == nil) != (errB == nil) || !geminiSameEvents(a, b) {
				t.Fatalf("chunk %q of %q:\nfast %+v (%v)\nslow %+v (%v)", chunk, in, a, errA, b, errB)
			}
		}
		if a, b = fast.End(a[:0]), slow.End(b[:0]); !geminiSameEvents(a, b) {
			t.Fatalf("the end of %q:\nfast %+v\nslow %+v", in, a, b)
		}
	})
}

// geminiSlowChunk returns chunk with a member the decoder does not know
// added in front, if it is an object.
func geminiSlowChunk(chunk []byte) []byte {
	i := bytes.IndexFunc(chunk, func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' })
	if i < 0 || chunk[i] != '{' {
		return chunk
	}
	member := `"rosettaSlow":0,`
	if j := bytes.IndexFunc(chunk[i+1:], func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' }); j < 0 || chunk[i+1+j] == '}' {
		member = `"rosettaSlow":0`
		if j < 0 {
			member += `,` // keep a bare "{" malformed
		}
	}
	out := append([]byte(nil), chunk[:i+1]...)
	out = append(out, member...)
	return append(out, chunk[i+1:]...)
}

// geminiSameEvents compares events, leaving out the ids of tool calls.
func geminiSameEvents(a, b []codec.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Block == codec.PartToolCall {
			x.ID, y.ID = "", ""
		}
		if !plainAsMarked(&x) || !plainAsMarked(&y) {
			return false
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// plainAsMarked reports whether e's text, if marked Plain, is one
// rawjson.AppendString writes as it is, and clears the mark: a text may or
// may not be marked (only the fast path marks them).
func plainAsMarked(e *codec.Event) bool {
	ok := !e.Plain || string(rawjson.AppendString(nil, e.Text)) == `"`+e.Text+`"`
	e.Plain = false
	return ok
}

// FuzzGeminiToolSchema gives AppendRequest arbitrary tool parameters (the
// canonical model takes any text there): what it accepts must come out as
// valid JSON, and a valid JSON object schema must not be refused unless it
// nests deeper than the rewriter goes.
func FuzzGeminiToolSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"city":{"type":"string","description":"e.g. Paris"}},"required":["city"]}`))
	f.Add([]byte(`{"$schema":"x","type":"object","properties":{"a":{"$ref":"#/$defs/a","type":"string"}},"$defs":{"a":{"type":"string"}}}`))
	f.Add([]byte("{\"type\":\"object\",\"properties\":{\"a\":{\"description\":\"tab\there\"}}}"))
	f.Fuzz(func(t *testing.T, schema []byte) {
		if len(schema) > geminiMaxInput {
			return
		}
		r := codec.Request{Model: "m", Messages: []codec.Message{{Role: codec.RoleUser, Parts: []codec.Part{{Kind: codec.PartText, Text: "hi"}}}},
			Tools: []codec.Tool{{Name: "f", Parameters: string(schema)}}}
		out, _, err := gemini.AppendRequest(nil, &r)
		if err != nil {
			if json.Valid(schema) && bytes.HasPrefix(bytes.TrimSpace(schema), []byte("{")) && bytes.Count(schema, []byte("{"))+bytes.Count(schema, []byte("[")) < 100 {
				t.Fatalf("AppendRequest refused the valid schema %q: %v", schema, err)
			}
			return
		}
		// ValidJSON: the declaration holds the schema some levels down,
		// so that one nested to encoding/json's limit comes out deeper.
		if !testutil.ValidJSON(out) {
			t.Fatalf("AppendRequest with the schema %q wrote invalid JSON %q", schema, out)
		}
	})
}
