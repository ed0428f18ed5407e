package fuzz

import (
	"bytes"
	"encoding/json"
	"reflect"
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
		out := rawjson.AppendLast(nil, b)
		var want, got any
		json.Unmarshal(b, &want) //nolint:errcheck // valid
		if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("AppendLast(%q) = %q, which reads %v; want %v", b, out, got, want)
		}
		if rawjson.Repeats(out) {
			t.Fatalf("AppendLast(%q) = %q repeats a key", b, out)
		}
	})
}

// FuzzRelayRenamed: the relays of Anthropic and Gemini events never
// panic, and an event they take goes out as JSON in which a parser that
// takes the first of a repeated key reads the usage that one that takes
// the last reads (encoding/json), and no model name but the public one.
func FuzzRelayRenamed(f *testing.F) {
	for _, s := range []string{
		`{"type":"message_start","message":{"model":"a","usage":{"input_tokens":1},"mod\u0065l":"b","usage":{"input_tokens":2,"input_tokens":3}}}`,
		`{"type":"message_delta","delta":{},"usage":{"output_tokens":1},"us\u0061ge":{"output_tokens":2}}`,
		`{"candidates":[],"usageMetadata":{"promptTokenCount":1},"usageMetadata":{"promptTokenCount":2},"modelVersion":"a","m\u006fdelVersion":"b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 16<<10 || bytes.ContainsAny(b, "\r\n") || !json.Valid(b) {
			return
		}
		for _, c := range []struct {
			d            codec.Dialect
			model, usage string
			parent       string
		}{{anthropic.Dialect, "model", "usage", "message"}, {gemini.Dialect, "modelVersion", "usageMetadata", ""}} {
			r := codec.Relay{Model: "pub", Dec: c.d.NewStreamDecoder()}
			ev := append(append([]byte("data: "), b...), "\n\n"...)
			out, err := c.d.RelayEvent(nil, ev, ev[6:len(ev)-2], &r)
			if err != nil {
				continue
			}
			data := out[6 : len(out)-2]
			var last map[string]any
			if json.Unmarshal(data, &last) != nil {
				continue // no object: nothing read
			}
			first, _ := testutil.FirstWins(data).(map[string]any)
			objects := [][2]map[string]any{{first, last}}
			if p, ok := last[c.parent].(map[string]any); ok && c.parent != "" {
				fp, _ := first[c.parent].(map[string]any)
				objects = append(objects, [2]map[string]any{fp, p})
			}
			for _, o := range objects {
				if !reflect.DeepEqual(o[0][c.usage], o[1][c.usage]) {
					t.Fatalf("%s relayed %q as %q: usage %v first, %v last", c.d.Name(), b, data, o[0][c.usage], o[1][c.usage])
				}
				for _, m := range []any{o[0][c.model], o[1][c.model]} {
					if s, ok := m.(string); ok && s != "pub" { // a name left: other values name none
						t.Fatalf("%s relayed %q as %q: model %v first, %v last", c.d.Name(), b, data, o[0][c.model], o[1][c.model])
					}
				}
			}
		}
	})
}
