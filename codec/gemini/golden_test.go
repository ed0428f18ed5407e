package gemini_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// Golden files (testdata/):
//
//	request/<name>.in.json            Gemini request → <name>.canonical.json → <name>.out.json
//	request_encode/<name>.canonical.json            canonical request → <name>.out.json
//	response/<name>.in.json           Gemini response → <name>.canonical.json → <name>.out.json
//	response_encode/<name>.canonical.json           canonical response → <name>.out.json
//	stream/<name>.sse | .array.json   Gemini stream → <name>.events.json → <name>.out.sse, .out.array.json
//	stream_encode/<name>.events.json                canonical events → <name>.out.sse, .out.array.json
//
// <name>.dropped.json lists what AppendRequest dropped, when anything. The
// provider fixtures of ../testdata/wire/gemini are inputs too, with their
// goldens here under the name wire_<file>. JSON outputs are stored indented
// (key order kept) so that they can be read; go test -update rewrites them.

const wireDir = "../testdata/wire/gemini"

// inputs lists the input files of dir with the given suffix, and the wire
// fixtures matching wirePattern, as golden base paths → input paths.
func inputs(t *testing.T, dir, suffix, wirePattern string) map[string]string {
	t.Helper()
	m := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*"+suffix))
	for _, p := range paths {
		if !strings.Contains(filepath.Base(p), ".out.") { // outputs share the suffix
			m[strings.TrimSuffix(p, suffix)] = p
		}
	}
	if wirePattern != "" {
		wire, _ := filepath.Glob(filepath.Join(wireDir, wirePattern))
		for _, p := range wire {
			name := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
			m[filepath.Join("testdata", dir, "wire_"+name)] = p
		}
	}
	if len(m) == 0 {
		t.Fatalf("no inputs in testdata/%s", dir)
	}
	return m
}

func dumpDropped(t *testing.T, dropped []string) []byte {
	if len(dropped) == 0 {
		return nil
	}
	return goldentest.Dump(t, dropped)
}

// lossy names the golden inputs whose second decode differs from the first
// by design, and why.
var lossy = map[string]string{
	"redacted":          "redacted thinking cannot be sent to Gemini",
	"json_schema":       "the encoder removes $schema, which Gemini rejects",
	"thinking_level":    "the encoder sends a level as a budget (Gemini 2.5 has no levels)",
	"calls_with_ids":    "function responses are put in the order of their calls",
	"streamed_thinking": "unsigned thought text is not sent to Gemini",
}

func TestRequestGolden(t *testing.T) {
	for base, in := range inputs(t, "request", ".in.json", "generate_request*.json") {
		name := filepath.Base(base)
		t.Run(name, func(t *testing.T) {
			var r codec.Request
			if err := gemini.DecodeRequest(goldentest.Read(t, in), &r); err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			canon := goldentest.Dump(t, &r)
			goldentest.Check(t, base+".canonical.json", canon)

			out, dropped, err := gemini.AppendRequest(nil, &r)
			if err != nil {
				t.Fatalf("AppendRequest: %v", err)
			}
			goldentest.Check(t, base+".out.json", goldentest.IndentJSON(t, out))
			goldentest.CheckOptional(t, base+".dropped.json", dumpDropped(t, dropped))

			var r2 codec.Request
			if err := gemini.DecodeRequest(out, &r2); err != nil {
				t.Fatalf("DecodeRequest of the output: %v\n%s", err, out)
			}
			if _, ok := lossy[name]; !ok && !bytes.Equal(goldentest.Dump(t, &r2), canon) {
				t.Errorf("decode → encode → decode changed the request:\n%s", goldentest.DiffLines(canon, goldentest.Dump(t, &r2)))
			}
			requireFixedPoint(t, out)
		})
	}
}

// requireFixedPoint checks that decoding and encoding an encoder's output
// gives it back unchanged.
func requireFixedPoint(t *testing.T, out []byte) {
	t.Helper()
	var r codec.Request
	if err := gemini.DecodeRequest(out, &r); err != nil {
		t.Fatalf("DecodeRequest of the output: %v", err)
	}
	again, _, err := gemini.AppendRequest(nil, &r)
	if err != nil {
		t.Fatalf("AppendRequest of the decoded output: %v", err)
	}
	if !bytes.Equal(again, out) {
		t.Errorf("encode(decode(out)) != out:\n%s\n%s", again, out)
	}
}

func TestRequestEncodeGolden(t *testing.T) {
	for base, in := range inputs(t, "request_encode", ".canonical.json", "") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			var r codec.Request
			if err := json.Unmarshal(goldentest.Read(t, in), &r); err != nil {
				t.Fatal(err)
			}
			out, dropped, err := gemini.AppendRequest(nil, &r)
			if err != nil {
				t.Fatalf("AppendRequest: %v", err)
			}
			goldentest.Check(t, base+".out.json", goldentest.IndentJSON(t, out))
			goldentest.CheckOptional(t, base+".dropped.json", dumpDropped(t, dropped))
			requireFixedPoint(t, out)
		})
	}
}

func TestResponseGolden(t *testing.T) {
	for base, in := range inputs(t, "response", ".in.json", "*response_*.json") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			var resp codec.Response
			if err := gemini.DecodeResponse(goldentest.Read(t, in), &resp); err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			canon := goldentest.Dump(t, &resp)
			goldentest.Check(t, base+".canonical.json", canon)

			out := gemini.AppendResponse(nil, &resp, codec.StreamInfo{})
			goldentest.Check(t, base+".out.json", goldentest.IndentJSON(t, out))

			var resp2 codec.Response
			if err := gemini.DecodeResponse(out, &resp2); err != nil {
				t.Fatalf("DecodeResponse of the output: %v", err)
			}
			if !bytes.Equal(goldentest.Dump(t, &resp2), canon) {
				t.Errorf("decode → encode → decode changed the response:\n%s", goldentest.Dump(t, &resp2))
			}
		})
	}
}

func TestResponseEncodeGolden(t *testing.T) {
	for base, in := range inputs(t, "response_encode", ".canonical.json", "") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			var resp codec.Response
			if err := json.Unmarshal(goldentest.Read(t, in), &resp); err != nil {
				t.Fatal(err)
			}
			info := codec.StreamInfo{ID: "resp-fallback", Model: "public-model"}
			out := gemini.AppendResponse(nil, &resp, info)
			goldentest.Check(t, base+".out.json", goldentest.IndentJSON(t, out))

			var resp2 codec.Response
			if err := gemini.DecodeResponse(out, &resp2); err != nil {
				t.Fatalf("DecodeResponse of the output: %v", err)
			}
			if again := gemini.AppendResponse(nil, &resp2, info); !bytes.Equal(again, out) {
				t.Errorf("encode(decode(out)) != out:\n%s\n%s", again, out)
			}
		})
	}
}

// decodeSSE decodes a whole SSE transcript, event by event, then End.
func decodeSSE(t *testing.T, b []byte) []codec.Event {
	t.Helper()
	var d gemini.StreamDecoder
	var events []codec.Event
	for len(b) > 0 {
		n := sse.Next(b)
		if n == 0 {
			t.Fatalf("incomplete SSE event at the end: %q", b)
		}
		data, multi, ok := sse.Data(b[:n])
		if multi {
			data = sse.AppendData(nil, b[:n])
		}
		if ok {
			var err error
			from := len(events)
			if events, err = d.Decode(events, nil, data); err != nil {
				t.Fatalf("Decode(%s): %v", data, err)
			}
			keep(events[from:])
		}
		b = b[n:]
	}
	return d.End(events)
}

// keep copies the strings of events, which are valid only until the next
// call of Decode.
func keep(events []codec.Event) {
	for i := range events {
		e := &events[i]
		for _, s := range []*string{&e.ID, &e.Model, &e.Name, &e.Text, &e.Arguments, &e.Signature, &e.Data, &e.StopSequence} {
			*s = strings.Clone(*s)
		}
	}
}

// decodeArray decodes a whole JSON-array stream, then End.
func decodeArray(t *testing.T, b []byte) []codec.Event {
	t.Helper()
	var s gemini.ArraySplitter
	var d gemini.StreamDecoder
	var events []codec.Event
	for len(b) > 0 {
		elem, n, err := s.Next(b)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("incomplete array stream: %q", b)
		}
		if elem != nil {
			from := len(events)
			if events, err = d.Decode(events, nil, elem); err != nil {
				t.Fatalf("Decode(%s): %v", elem, err)
			}
			keep(events[from:])
		}
		b = b[n:]
	}
	if !s.Done() {
		t.Fatal("the array never closed")
	}
	return d.End(events)
}

func readEvents(t *testing.T, path string) []codec.Event {
	t.Helper()
	var events []codec.Event
	dec := json.NewDecoder(bytes.NewReader(goldentest.Read(t, path)))
	for dec.More() {
		var e codec.Event
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	return events
}

// encodeStream encodes events with a fresh encoder, framed as the client
// asked (the JSON array with array set).
func encodeStream(events []codec.Event, array bool) []byte {
	var f codec.Framing
	if array {
		f = gemini.Framing(true)
	}
	return testutil.EncodeStream(new(gemini.StreamEncoder), codec.StreamInfo{}, events, f)
}

func TestStreamGolden(t *testing.T) {
	in := inputs(t, "stream", ".sse", "stream_sse_*.sse")
	for base, p := range inputs(t, "stream", ".array.json", "stream_array.json") {
		in[base] = p
	}
	for base, p := range in {
		t.Run(filepath.Base(base), func(t *testing.T) {
			b := goldentest.Read(t, p)
			var events []codec.Event
			if strings.HasSuffix(p, ".sse") {
				events = decodeSSE(t, b)
			} else {
				events = decodeArray(t, b)
			}
			canon := goldentest.DumpEvents(t, events)
			goldentest.Check(t, base+".events.json", canon)

			out := encodeStream(events, false)
			goldentest.Check(t, base+".out.sse", out)
			if got := goldentest.DumpEvents(t, decodeSSE(t, out)); !bytes.Equal(got, canon) {
				t.Errorf("decode → encode → decode changed the events:\n%s", got)
			}
			arr := encodeStream(events, true)
			testutil.JSONArray(t, arr)
			goldentest.Check(t, base+".out.array.json", arr)
			if got := goldentest.DumpEvents(t, decodeArray(t, arr)); !bytes.Equal(got, canon) {
				t.Errorf("the array form decodes to other events:\n%s", got)
			}
		})
	}
}

func TestStreamEncodeGolden(t *testing.T) {
	for base, p := range inputs(t, "stream_encode", ".events.json", "") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			events := readEvents(t, p)
			out := encodeStream(events, false)
			goldentest.Check(t, base+".out.sse", out)
			if again := encodeStream(decodeSSE(t, out), false); !bytes.Equal(again, out) {
				t.Errorf("encode(decode(out)) != out:\n%s", again)
			}
			arr := encodeStream(events, true)
			testutil.JSONArray(t, arr)
			goldentest.Check(t, base+".out.array.json", arr)
		})
	}
}
