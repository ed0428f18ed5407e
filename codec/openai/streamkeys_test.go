package openai_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// repeatedKeyChunks are chat chunks whose model and usage are repeated,
// spelled with escapes, or nested where they do not count, with the usage
// a client's JSON parser reads from each (the last top-level occurrence,
// keys decoded).
var repeatedKeyChunks = []struct {
	data string
	want codec.Usage
}{
	{`{"model":"up1","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1},"usage":{"prompt_tokens":7,"completion_tokens":8}}`,
		codec.Usage{Input: 7, Output: 8}},
	{`{"us\u0061ge":{"prompt_tokens":7,"completion_tokens":8},"choices":[],"mod\u0065l":"up1"}`, codec.Usage{Input: 7, Output: 8}},
	{`{"usage":{"prompt_tokens":7,"completion_tokens":8},"model":"up1","choices":[],"us\u0061ge":{"prompt_tokens":2}}`,
		codec.Usage{Input: 2}},
	{`{"model":"up1","mod\u0065l":"up2","choices":[{"index":0,"delta":{"content":"x"},"usage":{"prompt_tokens":99}}],` +
		`"usage":{"prompt_tokens":7,"completion_tokens":8},"model":"up3"}`, codec.Usage{Input: 7, Output: 8}},
	{`{"model":"up1","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":8},"usage":null}`, codec.Usage{}},
	{`{"model":"up1","choices":[],"usage":{"prompt_tokens":"x","prompt_tokens":7,"completion_tokens":8}}`, codec.Usage{Input: 7, Output: 8}},
	{`{"model":"up1","x":{"model":"nested","usage":{"prompt_tokens":5}},"choices":[]}`, codec.Usage{}},
	{`{"model":"up\u0031","choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"completion_t\u006fkens":3}}`, codec.Usage{Output: 3}},
}

// clientReads is what a client's JSON parser reads of a chunk's top-level
// model and usage: a map keeps the last of a key, decoded.
func clientReads(t *testing.T, data []byte) (model string, u codec.Usage) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	_ = json.Unmarshal(m["model"], &model)
	var w map[string]json.RawMessage
	if json.Unmarshal(m["usage"], &w) == nil && w != nil {
		_ = json.Unmarshal(w["prompt_tokens"], &u.Input)
		_ = json.Unmarshal(w["completion_tokens"], &u.Output)
	}
	return model, u
}

// firstReads is what a parser that takes the first of a repeated key
// reads of a chunk's model and usage.
func firstReads(t *testing.T, b []byte) (model string, u codec.Usage) {
	t.Helper()
	m, _ := testutil.FirstWins(b).(map[string]any)
	model, _ = m["model"].(string)
	usage, _ := m["usage"].(map[string]any)
	n := func(v any) int {
		f, _ := v.(float64)
		return int(f)
	}
	if usage != nil {
		u.Input, u.Output = n(usage["prompt_tokens"]), n(usage["completion_tokens"])
	}
	return model, u
}

// TestRelayEventAsClientsRead: the relay bills a chunk by the usage a
// client reads, renames the model a client reads, and leaves no upstream
// name in an earlier duplicate, nor another usage, for a reader that takes
// the first; as the first event, and after text deltas whose shape the
// check keeps.
func TestRelayEventAsClientsRead(t *testing.T) {
	for _, c := range repeatedKeyChunks {
		if _, u := clientReads(t, []byte(c.data)); u != c.want {
			t.Fatalf("encoding/json reads %+v of %s", u, c.data) // the table's own premise
		}
		for _, after := range []string{"", chunkContent, chunkWire} {
			r := codec.Relay{Model: "pub", IncludeUsage: true}
			if after != "" {
				if _, err := openai.Dialect.RelayEvent(nil, []byte(after), []byte(after), &r); err != nil {
					t.Fatal(err)
				}
				r.Usage = codec.Usage{}
			}
			out, err := openai.Dialect.RelayEvent(nil, []byte(c.data), []byte(c.data), &r)
			if err != nil || r.Usage != c.want {
				t.Errorf("after %.20s: RelayEvent(%s): usage %+v, %v; want %+v", after, c.data, r.Usage, err, c.want)
			}
			model, _ := clientReads(t, out)
			if wantModel := strings.Contains(c.data, `"up`); wantModel != (model == "pub") || bytes.Contains(out, []byte(`"up`)) {
				t.Errorf("after %.20s: RelayEvent(%s) = %s", after, c.data, out)
			}
			if m, u := firstReads(t, out); m != model || u != c.want {
				t.Errorf("after %.20s: RelayEvent(%s) = %s, which a first-wins parser reads as %q, %+v", after, c.data, out, m, u)
			}
		}
	}
}

// TestRelayEventKeptShape: a text delta whose shape the check keeps, with
// its model twice, is renamed in full each time the shape comes again; a
// chunk with repeated keys that the check does not keep (no text) leaves
// the kept one read as it was.
func TestRelayEventKeptShape(t *testing.T) {
	twice := strings.Replace(chunkWire, `"service_tier"`, `"mod\u0065l":"up2","service_tier"`, 1)
	other := strings.Replace(twice, `" is"`, `" was"`, 1)
	usage := `{"model":"up1","choices":[],"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":4}}`
	for _, stream := range [][]string{
		{twice, other, other, twice},
		{chunkWire, usage, strings.Replace(chunkWire, `" is"`, `" was"`, 1), twice, other},
	} {
		r := codec.Relay{Model: "pub", IncludeUsage: true}
		for _, ev := range stream {
			out, err := openai.Dialect.RelayEvent(nil, []byte(ev), []byte(ev), &r)
			model, u := clientReads(t, []byte(ev))
			got, _ := clientReads(t, out)
			if err != nil || got != "pub" || bytes.Contains(out, []byte(model)) || u != (codec.Usage{}) && r.Usage != u {
				t.Fatalf("RelayEvent(%s) = %s, %v, usage %+v", ev, out, err, r.Usage)
			}
		}
	}
}

// TestDecodeUsageErrorsLastWins: a count or details object that a later
// occurrence of its member replaces is no error, as it is not read; the
// last one that is bad is.
func TestDecodeUsageErrorsLastWins(t *testing.T) {
	for in, want := range map[string]codec.Usage{
		`{"prompt_tokens":"x","prompt_tokens":3}`:                                              {Input: 3},
		`{"completion_tokens":-1,"completion_t\u006fkens":2}`:                                  {Output: 2},
		`{"prompt_tokens_details":7,"prompt_tokens_details":{"cached_tokens":2}}`:              {CachedInput: 2},
		`{"completion_tokens_details":{"reasoning_tokens":"x","reasoning_tokens":5}}`:          {Reasoning: 5},
		`{"prompt_tokens":1,"prompt_tokens_details":[],"prompt_tokens_details":null}`:          {Input: 1},
		`{"prompt_tokens":"x","completion_tokens":-1,"prompt_tokens":1,"completion_tokens":2}`: {Input: 1, Output: 2},
	} {
		if u, err := openai.DecodeUsage([]byte(in)); err != nil || u != want {
			t.Errorf("DecodeUsage(%s) = %+v, %v; want %+v", in, u, err, want)
		}
	}
	for _, in := range []string{
		`{"prompt_tokens":3,"prompt_tokens":"x"}`,
		`{"prompt_tokens_details":{"cached_tokens":2},"prompt_tokens_details":7}`,
		`{"completion_tokens":"x","prompt_tokens":"y","prompt_tokens":1}`,
	} {
		if u, err := openai.DecodeUsage([]byte(in)); err == nil {
			t.Errorf("DecodeUsage(%s) = %+v, no error", in, u)
		}
	}
}

// TestResponsesRelayEventAsClientsRead: a lifecycle event's response,
// and its model and usage, are the last so named, keys decoded; every
// response's model is renamed.
func TestResponsesRelayEventAsClientsRead(t *testing.T) {
	resp := func(model, usage string) string {
		return `{"id":"resp_1","status":"completed","model":"` + model + `","usage":` + usage + `}`
	}
	u := func(in, out int) string {
		return `{"input_tokens":` + string(rune('0'+in)) + `,"output_tokens":` + string(rune('0'+out)) + `}`
	}
	for _, c := range []struct {
		data string
		want codec.Usage
	}{
		{`{"type":"response.completed","response":` + resp("up1", u(1, 2)) + `,"response":` + resp("up2", u(3, 4)) + `}`, codec.Usage{Input: 3, Output: 4}},
		{`{"type":"response.completed","r\u0065sponse":` + resp("up1", u(5, 6)) + `}`, codec.Usage{Input: 5, Output: 6}},
		{`{"type":"response.completed","response":{"id":"r","model":"up1","usage":` + u(1, 1) + `,"us\u0061ge":` + u(2, 3) +
			`,"mod\u0065l":"up2","output":[{"usage":` + u(9, 9) + `}]}}`, codec.Usage{Input: 2, Output: 3}},
		{`{"type":"response.completed","response":` + resp("up1", u(1, 2)) + `,"response":null}`, codec.Usage{}},
		// The first response has no usage, and another id.
		{`{"type":"response.completed","response":{"id":"resp_0","status":"in_progress"},"response":` + resp("up1", u(3, 4)) + `}`,
			codec.Usage{Input: 3, Output: 4}},
	} {
		r := codec.Relay{Model: "pub"}
		out, err := openai.Responses.RelayEvent(nil, []byte(c.data), []byte(c.data), &r)
		if err != nil || r.Usage != c.want || bytes.Contains(out, []byte(`"up`)) && c.want != (codec.Usage{}) {
			t.Errorf("RelayEvent(%s) = %s, %v, usage %+v; want %+v", c.data, out, err, r.Usage, c.want)
		}
		first, _ := testutil.FirstWins(out).(map[string]any)["response"].(map[string]any)
		if u, _ := first["usage"].(map[string]any); (c.want == codec.Usage{}) != (u == nil) || u != nil &&
			(fmt.Sprint(u["input_tokens"]) != fmt.Sprint(c.want.Input) || fmt.Sprint(u["output_tokens"]) != fmt.Sprint(c.want.Output)) {
			t.Errorf("RelayEvent(%s) = %s, whose first response's usage is %v", c.data, out, u)
		}
		// Every reader reads one response: its id and status too.
		fr, lr := testutil.FirstWins(out).(map[string]any)["response"], testutil.LastWins(out).(map[string]any)["response"]
		if !reflect.DeepEqual(fr, lr) {
			t.Errorf("RelayEvent(%s) = %s: a first-wins reader reads the response %v, a last-wins one %v", c.data, out, fr, lr)
		}
	}
	// A delta with escapes in its text is passed as it is.
	delta := `{"type":"response.output_text.delta","delta":"a\"b\\n","model":"up1"}`
	r := codec.Relay{Model: "pub"}
	if out, err := openai.Responses.RelayEvent(nil, []byte(delta), []byte(delta), &r); err != nil || string(out) != delta {
		t.Errorf("RelayEvent(%s) = %s, %v", delta, out, err)
	}
}

// TestStreamDecoderAsClientsRead: the translating decoder reads a chunk's
// usage and model as a client's JSON parser reads them.
func TestStreamDecoderAsClientsRead(t *testing.T) {
	for _, c := range repeatedKeyChunks {
		model, _ := clientReads(t, []byte(c.data))
		var d openai.StreamDecoder
		evs, err := d.Decode(nil, nil, []byte(c.data))
		if err != nil {
			t.Fatalf("Decode(%s): %v", c.data, err)
		}
		evs = d.End(evs)
		var u codec.Usage
		start := ""
		for _, e := range evs {
			switch e.Kind {
			case codec.EventUsage:
				u = e.Usage
			case codec.EventStart:
				start = e.Model
			}
		}
		if u != c.want || start != model && start != "" { // no start: a chunk of neither choice nor usage
			t.Errorf("Decode(%s): usage %+v, model %q; want %+v, %q", c.data, u, start, c.want, model)
		}
	}
}
