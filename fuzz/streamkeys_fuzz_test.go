package fuzz

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// FuzzAppendLast holds rawjson.AppendLast to encoding/json: what it makes
// of a JSON value reads as the value does (the last of a repeated key),
// repeats no key in objects nested through objects (rawjson.Repeats), and
// Repeats is false for a value that AppendLast leaves as it reads.
func FuzzAppendLast(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"\u0062":2},"c":[{"d":1,"d":2}]}`, `{"é":1,"\u00e9":2}`, `[1]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 16<<10 || !json.Valid(b) {
			return
		}
		// The callers hand AppendLast and Repeats a value cut from its first
		// byte to its last (rawjson.ValueEnd): the whitespace JSON allows
		// around it is no part of it.
		b = bytes.Trim(b, " \t\r\n")
		out := rawjson.AppendLast(nil, b)
		var want, got any
		if json.Unmarshal(b, &want) != nil {
			return // valid, but a number past float64's range: nothing to compare with
		}
		if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("AppendLast(%q) = %q, which reads %v; want %v", b, out, got, want)
		}
		if rawjson.Repeats(out) {
			t.Fatalf("AppendLast(%q) = %q repeats a key", b, out)
		}
	})
}

// FuzzRelayRenamed: the relays of Anthropic and Gemini events never
// panic, and an event they take, under any SSE name, goes out as JSON in
// which a parser that takes the first of a repeated key reads the usage
// that one that takes the last reads (encoding/json), at the top level and
// in the first and the last parent alike, and no model name but the
// public one; the stream bills the counts both read.
func FuzzRelayRenamed(f *testing.F) {
	for _, s := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"model":"a","usage":{"input_tokens":1},"mod\u0065l":"b","usage":{"input_tokens":2,"input_tokens":3}}}`},
		{"message_delta", `{"type":"message_delta","delta":{},"usage":{"output_tokens":1},"us\u0061ge":{"output_tokens":2}}`},
		{"message_stop", `{"type":"message_delta","delta":{},"usage":{"output_tokens":42}}`},
		{"message_start", `{"type":"message_start","message":{"model":"up1","usage":{"input_tokens":5}},"message":null}`},
		{"", `{"candidates":[],"usageMetadata":{"promptTokenCount":1},"usageMetadata":{"promptTokenCount":2},"modelVersion":"a","m\u006fdelVersion":"b"}`},
		{"", `{"candidates":[],"usageMetadata":{"promptTokenCount":100,"prompt_token_count":5,"candidatesTokenCount":null}}`},
	} {
		f.Add(s.name, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		if len(b) > 16<<10 || bytes.ContainsAny(b, "\r\n") || strings.ContainsAny(name, "\r\n") || !json.Valid(b) {
			return
		}
		for _, c := range []struct {
			d            codec.Dialect
			model, usage string
			parent       string
			counts       func(u map[string]any) (codec.Usage, bool)
		}{{anthropic.Dialect, "model", "usage", "message", anthropicCounts}, {gemini.Dialect, "modelVersion", "usageMetadata", "", geminiCounts}} {
			ev := []byte("data: " + string(b) + "\n\n")
			if name != "" {
				ev = append([]byte("event: "+name+"\n"), ev...)
			}
			var tc codec.Transcoder
			tc.ResetPass(c.d, codec.Relay{Model: "pub", Dec: c.d.NewStreamDecoder()}, nil)
			out, n := tc.Transcode(nil, ev)
			if tc.Err() != nil || n != len(ev) {
				continue
			}
			out = tc.End(out, nil)
			data := out[bytes.Index(out, []byte("data: "))+6 : len(out)-2]
			if !json.Valid(data) {
				t.Fatalf("%s relayed %q as %q, not JSON", c.d.Name(), b, data)
			}
			last, _ := testutil.LastWins(data).(map[string]any)
			first, _ := testutil.FirstWins(data).(map[string]any)
			if last == nil {
				continue // no object: nothing read
			}
			objects := [][2]any{{first, last}}
			if c.parent != "" {
				// The first parent as a first-wins reader reads it, and the
				// last as a last-wins one reads it, whatever their kinds.
				objects = append(objects, [2]any{first[c.parent], last[c.parent]})
			}
			for _, o := range objects {
				fo, _ := o[0].(map[string]any)
				lo, _ := o[1].(map[string]any)
				// Objects nested in arrays are not the relay's to reduce
				// (rawjson.AppendLast): no client reads a count there.
				if !reflect.DeepEqual(testutil.ThroughObjects(fo[c.usage]), testutil.ThroughObjects(lo[c.usage])) {
					t.Fatalf("%s relayed %q as %q: usage %v first, %v last", c.d.Name(), b, data, fo[c.usage], lo[c.usage])
				}
				for _, m := range []any{fo[c.model], lo[c.model]} {
					if s, ok := m.(string); ok && s != "pub" { // a name left: other values name none
						t.Fatalf("%s relayed %q as %q: model %v first, %v last", c.d.Name(), b, data, fo[c.model], lo[c.model])
					}
				}
			}
			if want, ok := billed(c.d, name, b, last, first, c.usage, c.parent, c.counts); ok && tc.Usage() != want {
				t.Fatalf("%s relayed %q (event %q) as %q: billed %+v, clients read %+v", c.d.Name(), b, name, data, tc.Usage(), want)
			}
		}
	})
}

// billed is the usage a client reads of the one event b named name (both
// readers agreeing on its type), as the relay of d bills a stream of it
// alone; ok is false when that is not known: the decoder rejects the
// event, an SDK fails on it, or a count is no count.
func billed(d codec.Dialect, name string, b []byte, last, first map[string]any, usage, parent string,
	counts func(map[string]any) (codec.Usage, bool)) (_ codec.Usage, ok bool) {
	if _, err := d.NewStreamDecoder().Decode(nil, []byte(name), b); err != nil {
		return codec.Usage{}, false
	}
	if parent == "" {
		u, _ := last[usage].(map[string]any)
		return counts(u)
	}
	typ, _ := last["type"].(string)
	if firstType, _ := first["type"].(string); firstType != typ || name == "error" {
		return codec.Usage{}, false
	}
	switch {
	case name == "ping": // skipped by the SDKs whatever it holds
	case typ == "message_start":
		msg, _ := last[parent].(map[string]any)
		u, _ := msg[usage].(map[string]any)
		return counts(u)
	case typ == "message_delta":
		u, _ := last[usage].(map[string]any)
		return counts(u)
	}
	return codec.Usage{}, true
}

// count reads the count member key of u as a client does: absent or null
// is 0; ok is false for a value no SDK reads as a count.
func count(u map[string]any, key string) (n int, ok bool) {
	switch v := u[key].(type) {
	case nil:
		return 0, true
	case float64:
		return int(v), v >= 0 && v < 1<<50 && v == float64(int(v))
	}
	return 0, false
}

// counts reads the members keys of u as counts: ok is false when one is
// no count.
func counts(u map[string]any, keys ...string) (ns [5]int, ok bool) {
	for i, k := range keys {
		if ns[i], ok = count(u, k); !ok {
			return ns, false
		}
	}
	return ns, true
}

// anthropicCounts is the usage a client reads of an Anthropic usage
// object: Input counts the cached tokens too, as the gateway bills it.
func anthropicCounts(u map[string]any) (codec.Usage, bool) {
	n, ok := counts(u, "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
	d, _ := u["output_tokens_details"].(map[string]any)
	think, dok := count(d, "thinking_tokens")
	return codec.Usage{Input: n[0] + n[1] + n[2], CachedInput: n[1], CacheWrite: n[2], Output: n[3], Reasoning: think}, ok && dok
}

// geminiCounts is the usage a client reads of a usageMetadata object.
func geminiCounts(u map[string]any) (codec.Usage, bool) {
	n, ok := counts(u, "promptTokenCount", "toolUsePromptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount")
	return codec.Usage{Input: n[0] + n[1], Output: n[2] + n[3], CachedInput: n[4], Reasoning: n[3]}, ok
}
