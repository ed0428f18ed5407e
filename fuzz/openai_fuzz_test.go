package fuzz

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// seedRequests adds the files seedPaths finds as seeds; for the golden
// files of codec/openai/testdata/upstream, the request section.
func seedRequests(f *testing.F, patterns ...string) {
	f.Helper()
	for _, p := range seedPaths(f, patterns...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if parts := strings.Split(string(b), "\n-----\n"); len(parts) == 3 {
			b = []byte(parts[1])
		}
		f.Add(b)
	}
}

// FuzzChatRequest checks the pass-through request path against encoding/json:
// Parse never panics and reads what encoding/json reads; what it accepts is
// valid JSON, and the body AppendUpstream makes of it is valid JSON with the
// mapped model, the same messages and other members, and usage switched on
// for streams.
func FuzzChatRequest(f *testing.F) {
	seedRequests(f, "../codec/rawjson/testdata/corpus/openai_chat_*.json",
		"../codec/openai/testdata/*.json", "../codec/openai/testdata/upstream/*.txt")
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, s := range []string{
		`{"model":"gpt-4o",` + msgs + `}`,
		`{"model":"gpt\u002d4o",` + msgs + `,"stream":true}`,
		`{` + msgs + `,"stream":true,"stream_options":null,"model":"m"}`,
		`{"model":"m",` + msgs + `,"stream":true,"stream_options":{"include_usage":false}}`,
		`{"model":"m",` + msgs + `,"stream":true,"stream_options":{"other":1}}`,
		`{"model":"m",` + msgs + `,"stream":true,"stream_options":{"include_usage":true}}`,
		` {"model" : "m" , "stream" : true , ` + msgs + ` } `,
		`{"model":"a",` + msgs + `,"stream":false,"stream_options":null,"model":"b"}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		var r openai.ChatRequest
		perr := r.Parse(body)
		want, reason := expectChatRequest(body)
		if perr != nil {
			if reason == "" {
				t.Fatalf("Parse(%q) rejected a valid request: %v", body, perr)
			}
			return
		}
		if reason != "" {
			t.Fatalf("Parse(%q) accepted a request that is not valid: %s", body, reason)
		}
		// Parse keeps a name without escapes as it is, invalid UTF-8 included;
		// encoding/json replaces each invalid byte with U+FFFD, as []rune does.
		if string([]rune(string(r.Model))) != want.model || r.Stream != want.stream {
			t.Fatalf("Parse(%q) = model %q, stream %v; encoding/json reads %q, %v", body, r.Model, r.Stream, want.model, want.stream)
		}

		out := r.AppendUpstream(nil, body, "mapped-model")
		if !json.Valid(out) {
			t.Fatalf("AppendUpstream(%q) = %q: not valid JSON", body, out)
		}
		in, _ := members(body)
		got, _ := members(out)
		var model string
		if err := json.Unmarshal(got["model"], &model); err != nil || model != "mapped-model" {
			t.Fatalf("AppendUpstream(%q) = %q: model %s", body, out, got["model"])
		}
		for k, v := range in {
			if k != "model" && k != "stream_options" && !bytes.Equal(got[k], v) {
				t.Fatalf("AppendUpstream(%q) = %q: %q is %s, was %s", body, out, k, got[k], v)
			}
		}
		if want.stream {
			var so struct {
				IncludeUsage bool `json:"include_usage"`
			}
			if err := json.Unmarshal(got["stream_options"], &so); err != nil || !so.IncludeUsage {
				t.Fatalf("AppendUpstream(%q) = %q: include_usage not on", body, out)
			}
		} else if !bytes.Equal(got["stream_options"], in["stream_options"]) {
			t.Fatalf("AppendUpstream(%q) = %q: stream_options changed on a non-stream request", body, out)
		}
		if len(got) != len(in) && !(want.stream && in["stream_options"] == nil && len(got) == len(in)+1) {
			t.Fatalf("AppendUpstream(%q) = %q: members added or lost", body, out)
		}
	})
}

type chatRequest struct {
	model  string
	stream bool
}

// expectChatRequest reads body as encoding/json does and returns what Parse
// must find, or why Parse must reject it.
func expectChatRequest(body []byte) (want chatRequest, reason string) {
	if !json.Valid(body) {
		return want, "not valid JSON"
	}
	m, counts := members(body)
	switch {
	case m == nil:
		return want, "not an object"
	case counts["model"] > 1 || counts["messages"] > 1 || counts["stream"] > 1 || counts["stream_options"] > 1:
		return want, "a repeated key"
	}
	if json.Unmarshal(m["model"], &want.model) != nil || m["model"] == nil || m["model"][0] != '"' || want.model == "" {
		return want, "no model name"
	}
	var messages []json.RawMessage
	if json.Unmarshal(m["messages"], &messages) != nil || len(messages) == 0 {
		return want, "no messages"
	}
	if s := string(m["stream"]); s != "" && s != "true" && s != "false" && s != "null" {
		return want, "stream is not a boolean"
	}
	want.stream = string(m["stream"]) == "true"
	switch so := m["stream_options"]; {
	case so == nil || string(so) == "null":
	case so[0] != '{':
		return want, "stream_options is not an object"
	default:
		if _, c := members(so); c["include_usage"] > 1 {
			return want, "a repeated key in stream_options"
		}
	}
	return want, ""
}

// members returns the members of the JSON object b (the last of repeated
// keys, as encoding/json keeps) and how often each key occurs; nil if b is
// not a valid object.
func members(b []byte) (map[string]json.RawMessage, map[string]int) {
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	m, counts := map[string]json.RawMessage{}, map[string]int{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil
		}
		m[tok.(string)] = v
		counts[tok.(string)]++
	}
	return m, counts
}

// FuzzStreamChunk checks the relay's renaming of a chunk's model: it
// never panics, a chunk it takes is JSON and stays JSON, and every
// top-level model that is a string, in any spelling, bears the public
// name (the one a client's parser reads, and any earlier duplicate). Each
// chunk goes through one Relay twice, and once more with its text
// changed, so that the second and third take the kept shape's fast path
// (rawjson.Shape) where the first was read in full: the fast path relays
// and bills what the full reading does.
func FuzzStreamChunk(f *testing.F) {
	seedFiles(f, "../codec/rawjson/testdata/corpus/openai_chunk_*.json",
		"../codec/rawjson/testdata/corpus/openai_chat_response*.json")
	for _, s := range []string{
		`{"id":"x", "model": "gpt-4o" ,"choices":[],"usage" : {"prompt_tokens":1}}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"model\":\"x\",\"usage\":{}}"}}]}}],"model":"real","usage":null}`,
		`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[]}`,
		`{"model":"a","mod\u0065l":"b","x":{"model":"c"},"model":"d\u0031"}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":2}}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64<<10 {
			return
		}
		r := codec.Relay{Model: "pub", IncludeUsage: true}
		out, err := openai.Dialect.RelayEvent(nil, b, b, &r)
		if err != nil {
			return
		}
		checkRenamed(t, b, out)
		usage := r.Usage
		again, err := openai.Dialect.RelayEvent(nil, b, b, &r)
		if err != nil || !bytes.Equal(again, out) || r.Usage != usage {
			t.Fatalf("RelayEvent(%q) again = %q, %v, usage %+v; first %q, usage %+v", b, again, err, r.Usage, out, usage)
		}
		if i := bytes.Index(b, []byte(`"content":"`)); i >= 0 {
			c := append(append(b[:i+11:i+11], 'x'), b[i+11:]...) // the text changed, the shape kept
			out, err := openai.Dialect.RelayEvent(nil, c, c, &r)
			if err != nil || r.Usage != usage {
				t.Fatalf("RelayEvent(%q) after %q: %v, usage %+v, want %+v", c, b, err, r.Usage, usage)
			}
			checkRenamed(t, c, out)
		}
	})
}

// checkRenamed fails t unless out, the relay's chunk for b, is JSON whose
// top-level models that are strings all bear the public name.
func checkRenamed(t *testing.T, b, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("RelayEvent(%q) = %q, not JSON", b, out)
	}
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber() // a number past float64's range (1e700) is JSON, not a fault of the relay's
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	for d.More() {
		key, _ := d.Token()
		var v any
		if d.Decode(&v) != nil {
			t.Fatalf("RelayEvent(%q) = %q", b, out)
		}
		if s, ok := v.(string); key == "model" && ok && s != "pub" {
			t.Fatalf("RelayEvent(%q) = %q: a model %q left", b, out, s)
		}
	}
}
