package openai_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// Golden files, under testdata/translate/:
//
//	request/<name>.in.json          OpenAI request → <name>.canonical.json → <name>.out.json
//	                                (or → <name>.error.json when DecodeRequest refuses it)
//	request_encode/<name>.canonical.json          canonical request → <name>.out.json
//	response/<name>.in.json         OpenAI response → <name>.canonical.json → <name>.out.json
//	response_encode/<name>.canonical.json         canonical response → <name>.out.json
//	stream/<name>.sse               OpenAI stream → <name>.events.json → <name>.out.sse
//	stream_encode/<name>.events.json              canonical events → <name>.out.sse
//
// <name>.dropped.json lists what DecodeRequestDropped and AppendRequest
// dropped, when anything. The provider fixtures of ../testdata/wire/openai
// are inputs too, with their goldens here named wire_<file>. JSON outputs
// are stored indented (key order kept) so that they can be read; events one
// per line. go test -update rewrites the goldens; read what it writes.

// The helpers shared with the other codec goldens.
var (
	read           = goldentest.Read
	golden         = goldentest.Check
	goldenOptional = goldentest.CheckOptional
	dump           = goldentest.Dump
	indentJSON     = goldentest.IndentJSON
	diffLines      = goldentest.DiffLines
	dumpEvents     = goldentest.DumpEvents
	cloneEvents    = goldentest.CloneEvents
	dumpDropped    = goldentest.DumpDropped
)

type droppedLists = goldentest.Dropped

const (
	goldenDir = "testdata/translate"
	wireDir   = "../testdata/wire/openai"
)

// testInfo is the StreamInfo of every encoding golden.
var testInfo = codec.StreamInfo{ID: "chatcmpl-rosetta0001", Model: "public-model", Created: 1795252445, IncludeUsage: true}

// inputs maps the golden base paths of dir to their input files: the files
// of dir with the given suffix, and the wire fixtures matching wirePattern.
func inputs(t *testing.T, dir, suffix, wirePattern string) map[string]string {
	t.Helper()
	m := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join(goldenDir, dir, "*"+suffix))
	for _, p := range paths {
		if base := strings.TrimSuffix(p, suffix); !strings.HasSuffix(base, ".out") {
			m[base] = p
		}
	}
	if wirePattern != "" {
		wire, _ := filepath.Glob(filepath.Join(wireDir, wirePattern))
		for _, p := range wire {
			name := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
			m[filepath.Join(goldenDir, dir, "wire_"+name)] = p
		}
	}
	if len(m) == 0 {
		t.Fatalf("no inputs in %s/%s", goldenDir, dir)
	}
	return m
}

// normalizeForRoundTrip clears what AppendRequest changes by design without
// reporting it: cache breakpoints (OpenAI caches prompts by itself) and
// usage in streams (always asked for).
func normalizeForRoundTrip(r *codec.Request) {
	clearCache := func(parts []codec.Part) {
		for i := range parts {
			parts[i].CacheControl, parts[i].CacheTTL = "", ""
		}
	}
	clearCache(r.System)
	for i := range r.Messages {
		clearCache(r.Messages[i].Parts)
		for j := range r.Messages[i].Parts {
			clearCache(r.Messages[i].Parts[j].Content)
		}
	}
	for i := range r.Tools {
		r.Tools[i].CacheControl = ""
	}
	r.IncludeUsage = r.IncludeUsage || r.Stream
}

func TestRequestGolden(t *testing.T) {
	for base, in := range inputs(t, "request", ".in.json", "chat_request_*.json") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			var r codec.Request
			var drops droppedLists
			var err *codec.Error
			drops.Decode, err = openai.DecodeRequestDropped(read(t, in), &r, nil)
			if err != nil {
				golden(t, base+".error.json", dump(t, err))
				return
			}
			canon := dump(t, &r)
			golden(t, base+".canonical.json", canon)

			out, encDrops, err := openai.AppendRequest(nil, &r)
			if err != nil {
				t.Fatalf("AppendRequest: %v", err)
			}
			drops.Encode = encDrops
			golden(t, base+".out.json", indentJSON(t, out))
			goldenOptional(t, base+".dropped.json", dumpDropped(t, drops))

			// Nothing dropped: a second decode gives the same request.
			var r2 codec.Request
			if err := openai.DecodeRequest(out, &r2); err != nil {
				t.Fatalf("DecodeRequest of the output: %v\n%s", err, out)
			}
			if len(drops.Decode) == 0 && len(drops.Encode) == 0 {
				normalizeForRoundTrip(&r)
				want := dump(t, &r)
				if got := dump(t, &r2); !bytes.Equal(got, want) {
					t.Errorf("decode → encode → decode changed the request:\n%s", diffLines(want, got))
				}
			}
			requireRequestFixedPoint(t, out)
		})
	}
}

// requireRequestFixedPoint checks that decoding and encoding an encoder's
// output gives it back unchanged.
func requireRequestFixedPoint(t *testing.T, out []byte) {
	t.Helper()
	var r codec.Request
	if err := openai.DecodeRequest(out, &r); err != nil {
		t.Fatalf("DecodeRequest of the output: %v", err)
	}
	again, _, err := openai.AppendRequest(nil, &r)
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
			if err := json.Unmarshal(read(t, in), &r); err != nil {
				t.Fatal(err)
			}
			out, dropped, err := openai.AppendRequest(nil, &r)
			if err != nil {
				golden(t, base+".error.json", dump(t, err))
				return
			}
			golden(t, base+".out.json", indentJSON(t, out))
			goldenOptional(t, base+".dropped.json", dumpDropped(t, droppedLists{Encode: dropped}))
			requireRequestFixedPoint(t, out)
		})
	}
}

func TestResponseGolden(t *testing.T) {
	for base, in := range inputs(t, "response", ".in.json", "chat_response_*.json") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			var resp codec.Response
			if err := openai.DecodeResponse(read(t, in), &resp); err != nil {
				golden(t, base+".error.txt", []byte(err.Error()+"\n"))
				return
			}
			canon := dump(t, &resp)
			golden(t, base+".canonical.json", canon)

			out := openai.AppendResponse(nil, &resp, testInfo)
			golden(t, base+".out.json", indentJSON(t, out))

			var resp2 codec.Response
			if err := openai.DecodeResponse(out, &resp2); err != nil {
				t.Fatalf("DecodeResponse of the output: %v", err)
			}
			resp2.ID, resp2.Model = resp.ID, resp.Model
			if got := dump(t, &resp2); !bytes.Equal(got, canon) {
				t.Errorf("decode → encode → decode changed the response:\n%s", diffLines(canon, got))
			}
			requireResponseFixedPoint(t, out)
		})
	}
}

func requireResponseFixedPoint(t *testing.T, out []byte) {
	t.Helper()
	var resp codec.Response
	if err := openai.DecodeResponse(out, &resp); err != nil {
		t.Fatalf("DecodeResponse of the output: %v", err)
	}
	if again := openai.AppendResponse(nil, &resp, testInfo); !bytes.Equal(again, out) {
		t.Errorf("encode(decode(out)) != out:\n%s\n%s", again, out)
	}
}

func TestResponseEncodeGolden(t *testing.T) {
	for base, in := range inputs(t, "response_encode", ".canonical.json", "") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			var resp codec.Response
			if err := json.Unmarshal(read(t, in), &resp); err != nil {
				t.Fatal(err)
			}
			out := openai.AppendResponse(nil, &resp, testInfo)
			golden(t, base+".out.json", indentJSON(t, out))
			requireResponseFixedPoint(t, out)
		})
	}
}

// decodeSSE decodes a whole SSE transcript, event by event, then End.
func decodeSSE(t testing.TB, b []byte) ([]codec.Event, error) {
	var d openai.StreamDecoder
	var events []codec.Event
	for len(b) > 0 {
		n := sse.Next(b)
		if n == 0 {
			// An unterminated last event: what a reader would get at EOF.
			n = len(b)
		}
		ev := b[:n]
		b = b[n:]
		if _, ok := sse.Field(ev, "data"); !ok {
			continue
		}
		name, _ := sse.Field(ev, "event")
		var err error
		from := len(events)
		events, err = d.Decode(events, name, sse.AppendData(nil, ev))
		cloneEvents(events[from:])
		if err != nil {
			return events, err
		}
	}
	return d.End(events), nil
}

// encodeEvents encodes canonical events as an OpenAI stream.
func encodeEvents(events []codec.Event, info codec.StreamInfo) []byte {
	var e openai.StreamEncoder
	e.Reset(info)
	var out []byte
	for i := range events {
		out = e.Encode(out, &events[i])
	}
	return e.End(out)
}

func loadEvents(t *testing.T, b []byte) []codec.Event {
	t.Helper()
	var events []codec.Event
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e codec.Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		events = append(events, e)
	}
	return events
}

// sameEvents compares two event sequences, ignoring the Start event's
// details (an OpenAI stream carries the client's id and model, and no
// early usage).
func sameEvents(a, b []codec.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind == codec.EventStart && y.Kind == codec.EventStart {
			continue
		}
		x.Plain, y.Plain = false, false // how the text was spelled, not what it says
		if x.Err != nil && y.Err != nil {
			if x.Err.Message != y.Err.Message {
				return false
			}
			x.Err, y.Err = nil, nil
		}
		if x != y {
			return false
		}
	}
	return true
}

// streamLossy names the stream goldens whose events change on a second
// decode by design, and why.
var streamLossy = map[string]string{
	"stop_pause":              "OpenAI has no pause: it is \"stop\"",
	"anthropic_thinking_tool": "Start's early usage and the stop sequence have no place in OpenAI chunks",
	"no_done":                 "a stream cut off has StopUnknown; OpenAI says \"stop\"",
	"gemini_text_signature":   "signatures on text parts have no place in OpenAI chunks",
	"refusal":                 "a refusal is text",
	"midstream_error":         "an OpenAI error event has no HTTP status (it reads as 502), and nothing follows it",
	"empty_stream":            "an OpenAI stream always has a first chunk and a finish_reason",
	"error_before_output":     "an OpenAI error event has no HTTP status (it reads as 502)",
}

func TestStreamGolden(t *testing.T) {
	for base, in := range inputs(t, "stream", ".sse", "chat_stream_*.sse") {
		name := filepath.Base(base)
		t.Run(name, func(t *testing.T) {
			events, err := decodeSSE(t, read(t, in))
			if err != nil {
				golden(t, base+".error.txt", []byte(err.Error()+"\n"))
				return
			}
			golden(t, base+".events.json", dumpEvents(t, events))
			out := encodeEvents(events, testInfo)
			testutil.CheckOpenAISSE(t, out)
			golden(t, base+".out.sse", out)
			requireStreamRoundTrip(t, name, events, out)
		})
	}
}

func requireStreamRoundTrip(t *testing.T, name string, events []codec.Event, out []byte) {
	t.Helper()
	again, err := decodeSSE(t, out)
	if err != nil {
		t.Fatalf("decoding the output: %v", err)
	}
	if _, lossy := streamLossy[name]; !lossy && !sameEvents(events, again) {
		t.Errorf("decode → encode → decode changed the events:\n%s", diffLines(dumpEvents(t, events), dumpEvents(t, again)))
	}
	if out2 := encodeEvents(again, testInfo); !bytes.Equal(out2, out) {
		t.Errorf("encode(decode(out)) != out:\n%s", diffLines(out, out2))
	}
}

func TestStreamEncodeGolden(t *testing.T) {
	for base, in := range inputs(t, "stream_encode", ".events.json", "") {
		name := filepath.Base(base)
		t.Run(name, func(t *testing.T) {
			events := loadEvents(t, read(t, in))
			out := encodeEvents(events, testInfo)
			testutil.CheckOpenAISSE(t, out)
			golden(t, base+".out.sse", out)
			requireStreamRoundTrip(t, name, events, out)
		})
	}
}

// TestStreamSplitEvents feeds every golden stream through a decoder whose
// input arrives in two reads: framing with the sse package must give the
// same events whatever the read boundary. It splits at every byte around
// event boundaries (where framing decides) and at every 13th elsewhere.
func TestStreamSplitEvents(t *testing.T) {
	for base, in := range inputs(t, "stream", ".sse", "chat_stream_*.sse") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			b := read(t, in)
			want, err := decodeSSE(t, b)
			if err != nil {
				return
			}
			wantDump := dumpEvents(t, want)
			for cut := 1; cut < len(b); cut++ {
				if cut%13 != 0 && !nearBoundary(b, cut) {
					continue
				}
				got := decodeChunked(t, b[:cut], b[cut:])
				if !bytes.Equal(dumpEvents(t, got), wantDump) {
					t.Fatalf("split at %d: events differ", cut)
				}
			}
		})
	}
}

// nearBoundary reports whether b[cut] is within three bytes of a line end.
func nearBoundary(b []byte, cut int) bool {
	for i := max(0, cut-3); i < min(len(b), cut+4); i++ {
		if b[i] == '\n' || b[i] == '\r' {
			return true
		}
	}
	return false
}

// decodeChunked decodes a transcript that arrives in pieces, framed as the
// proxy's relay frames it: complete events are decoded, the rest waits for
// more.
func decodeChunked(t *testing.T, pieces ...[]byte) []codec.Event {
	t.Helper()
	var d openai.StreamDecoder
	var events []codec.Event
	rec := goldentest.Recorder{Handle: func(name, data []byte) {
		var err error
		from := len(events)
		events, err = d.Decode(events, name, data)
		cloneEvents(events[from:])
		if err != nil {
			t.Fatal(err)
		}
	}}
	tc := goldentest.NewTranscoder(&rec, goldentest.NopEncoder{}, codec.StreamInfo{})
	for _, p := range pieces {
		tc.Write(p)
	}
	tc.Close()
	return d.End(events)
}
