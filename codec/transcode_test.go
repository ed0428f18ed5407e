package codec_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// passStream is an upstream stream of each style that names its model, the
// name, and the usage the stream reports.
var passStream = []struct {
	d           codec.Dialect
	path, model string
	usage       codec.Usage
}{
	{openai.Dialect, "testdata/in/openai/stream_text.sse", "gpt-4.1-mini-2025-04-14",
		codec.Usage{Input: 1612, Output: 9, CachedInput: 1536}},
	{anthropic.Dialect, "testdata/wire/anthropic/messages_stream_text.sse", "claude-haiku-4-5-20251001",
		codec.Usage{Input: 25, Output: 15}},
	{gemini.Dialect, "testdata/wire/gemini/stream_sse_text.sse", "gemini-2.5-flash",
		codec.Usage{Input: 12, Output: 42 + 311, Reasoning: 311}},
}

// runPass relays b on the pass-through path, split at every line end.
func runPass(t *testing.T, tc *codec.Transcoder, d codec.Dialect, r codec.Relay, f codec.Framing, b []byte) []byte {
	t.Helper()
	r.Dec = d.NewStreamDecoder()
	tc.ResetPass(d, r, f)
	var out, in []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		in = append(in, line...)
		var n int
		out, n = tc.Transcode(out, in)
		in = in[:copy(in, in[n:])]
	}
	out = tc.End(out, in)
	if err := tc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// On the pass-through path the client gets the upstream's bytes but for the
// model name, whichever style, and the usage is read on the way.
func TestTranscoderPassThrough(t *testing.T) {
	var tc codec.Transcoder
	for _, s := range passStream {
		t.Run(s.d.Name(), func(t *testing.T) {
			b := goldentest.Read(t, s.path)
			if !bytes.Contains(b, []byte(s.model)) {
				t.Fatalf("the fixture does not name %s", s.model)
			}
			kept := runPass(t, &tc, s.d, codec.Relay{IncludeUsage: true}, nil, b)
			if !bytes.Equal(kept, b) {
				t.Errorf("without a model to put back, the stream changed:\n%s", goldentest.DiffLines(b, kept))
			}
			if tc.Usage() != s.usage {
				t.Errorf("usage %+v, want %+v", tc.Usage(), s.usage)
			}
			renamed := runPass(t, &tc, s.d, codec.Relay{Model: "public-model", IncludeUsage: true}, nil, b)
			if bytes.Contains(renamed, []byte(s.model)) || !bytes.Contains(renamed, []byte(`"public-model"`)) {
				t.Errorf("the upstream's model name reaches the client:\n%s", renamed)
			}
			if want := bytes.ReplaceAll(b, []byte(s.model), []byte("public-model")); !bytes.Equal(renamed, want) {
				t.Errorf("more than the model changed:\n%s", goldentest.DiffLines(want, renamed))
			}
		})
	}
}

// An OpenAI client that did not ask for usage does not get the usage-only
// chunk the gateway asked for; its usage is still read.
func TestTranscoderStripsOwnUsageChunk(t *testing.T) {
	var tc codec.Transcoder
	s := passStream[0]
	out := runPass(t, &tc, s.d, codec.Relay{}, nil, goldentest.Read(t, s.path))
	if bytes.Contains(out, []byte(`"choices":[]`)) || !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
		t.Errorf("the usage chunk is relayed, or [DONE] is lost:\n%s", out)
	}
	if tc.Usage() != s.usage {
		t.Errorf("usage %+v", tc.Usage())
	}
}

// A Gemini client without alt=sse reads one JSON array, relayed or
// translated, and also when the stream fails midway.
func TestTranscoderArrayFraming(t *testing.T) {
	var tc codec.Transcoder
	b := goldentest.Read(t, passStream[2].path)
	arrays := map[string][]byte{
		"relayed": runPass(t, &tc, gemini.Dialect, codec.Relay{}, gemini.Framing(true), b),
	}
	tc.ResetPass(gemini.Dialect, codec.Relay{Dec: gemini.Dialect.NewStreamDecoder()}, gemini.Framing(true))
	out, _ := tc.Transcode(nil, goldentest.Events(b)[0])
	arrays["relayed, then failed"] = tc.Fail(out, &codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "boom"}, gemini.Dialect)
	tc.ResetTranslate(anthropic.Dialect.NewStreamDecoder(), gemini.Dialect.NewStreamEncoder(), codec.StreamInfo{Model: "m"}, gemini.Framing(true))
	out, _ = tc.Transcode(nil, goldentest.Read(t, passStream[1].path))
	arrays["translated"] = tc.End(out, nil)
	for name, arr := range arrays {
		var elems []json.RawMessage
		if err := json.Unmarshal(arr, &elems); err != nil || len(elems) == 0 {
			t.Errorf("%s: not a JSON array of chunks (%v):\n%s", name, err, arr)
		}
	}
	if !bytes.Contains(arrays["relayed, then failed"], []byte(`"boom"`)) {
		t.Errorf("the failure is not in the array: %s", arrays["relayed, then failed"])
	}
}

// A stream that fails after it started ends with the client's error event
// and none of its success terminators.
func TestTranscoderFail(t *testing.T) {
	var tc codec.Transcoder
	e := &codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "The upstream connection failed."}
	for _, s := range passStream {
		t.Run(s.d.Name(), func(t *testing.T) {
			first := goldentest.Events(goldentest.Read(t, s.path))[0]
			tc.ResetTranslate(s.d.NewStreamDecoder(), anthropic.Dialect.NewStreamEncoder(), codec.StreamInfo{ID: "msg_1", Model: "m"}, nil)
			out, _ := tc.Transcode(nil, first)
			out = tc.Fail(out, e, anthropic.Dialect)
			if !bytes.Contains(out, []byte("event: error")) || bytes.Contains(out, []byte("message_stop")) {
				t.Errorf("translated:\n%s", out)
			}
			tc.ResetPass(s.d, codec.Relay{Dec: s.d.NewStreamDecoder()}, nil)
			out, _ = tc.Transcode(nil, first)
			out = tc.Fail(out, e, s.d)
			if !bytes.Contains(out, []byte(e.Message)) || bytes.Contains(out, []byte("[DONE]")) {
				t.Errorf("relayed:\n%s", out)
			}
		})
	}
}
