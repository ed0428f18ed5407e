package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// relayReference is RelayEvent written plainly, each step a pass of its
// own: a check (encoding/json.Valid, which RelayEvent must agree with),
// then the top-level members as encoding/json's tokenizer reads them, keys
// decoded: the last usage and choices count, as a client's JSON parser
// reads them; every model that is a string is renamed, and when the usage
// is named twice or with escapes, or repeats a key within, every usage
// becomes the last reduced to the last of each key (rawjson.AppendLast,
// TestAppendLast), which parsers that take the first read alike.
func relayReference(dst, ev, data []byte, r *codec.Relay) ([]byte, error) {
	if !json.Valid(data) {
		return dst, codec.ErrNotJSON
	}
	members := topMembers(data)
	usage := lastOf(members, "usage")
	if rawjson.KindOf(usage) == rawjson.KindObject {
		if u, err := openai.DecodeUsage(usage); err == nil {
			r.Usage = u
		}
		if !r.IncludeUsage && rawjson.ArrayEmpty(lastOf(members, "choices")) {
			return dst, nil
		}
	}
	var last []byte
	if n, escaped := named(members, "usage"); n > 1 || escaped || rawjson.KindOf(usage) == rawjson.KindObject && repeatsKeys(usage) {
		last = rawjson.AppendLast(nil, usage)
	}
	off, pos := cap(ev)-cap(data), 0
	for _, m := range members {
		var with []byte
		switch {
		case m.key == "model" && r.Model != "" && rawjson.KindOf(m.value) == rawjson.KindString:
			with = []byte(`"` + r.Model + `"`)
		case m.key == "usage" && last != nil:
			with = last
		default:
			continue
		}
		dst = append(append(dst, ev[pos:off+m.at]...), with...)
		pos = off + m.at + len(m.value)
	}
	return append(dst, ev[pos:]...), nil
}

// member is a member of an object: its key decoded, whether it was
// spelled with escapes, its value and where the value starts.
type member struct {
	key     string
	escaped bool
	value   []byte
	at      int
}

// topMembers are the members of the valid JSON b, an object, as
// encoding/json's tokenizer reads them; none when b is no object.
func topMembers(b []byte) []member {
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var ms []member
	for d.More() {
		before := int(d.InputOffset())
		key, _ := d.Token()
		var v json.RawMessage
		if d.Decode(&v) != nil {
			return nil
		}
		end := int(d.InputOffset())
		escaped := bytes.IndexByte(b[before:end-len(v)], '\\') >= 0 // between the value before and this one: the key
		ms = append(ms, member{key.(string), escaped, b[end-len(v) : end], end - len(v)})
	}
	return ms
}

// named counts the members of ms named key, and reports whether one is
// spelled with escapes.
func named(ms []member, key string) (n int, escaped bool) {
	for _, m := range ms {
		if m.key == key {
			n++
			escaped = escaped || m.escaped
		}
	}
	return n, escaped
}

// repeatsKeys reports whether the object b, or one nested in it through
// objects, names a key twice.
func repeatsKeys(b []byte) bool {
	seen := map[string]bool{}
	for _, m := range topMembers(b) {
		if seen[m.key] || rawjson.KindOf(m.value) == rawjson.KindObject && repeatsKeys(m.value) {
			return true
		}
		seen[m.key] = true
	}
	return false
}

// lastOf is the value of the last of ms named key, or nil.
func lastOf(ms []member, key string) []byte {
	var v []byte
	for _, m := range ms {
		if m.key == key {
			v = m.value
		}
	}
	return v
}

// checkRelay compares RelayEvent with relayReference on one event whose
// data is data, with the client asking for usage or not, as a stream's
// first event and after a text delta, plain or api.openai.com's (whose
// shape the check keeps).
func checkRelay(t *testing.T, data []byte) {
	t.Helper()
	ev := append(append([]byte("data: "), data...), "\n\n"...)
	d := ev[len("data: ") : len(ev)-2]
	for _, includeUsage := range []bool{false, true} {
		for _, after := range []string{"", chunkContent, chunkWire} {
			var got, want codec.Relay
			got.Model, want.Model = "my-model", "my-model"
			got.IncludeUsage, want.IncludeUsage = includeUsage, includeUsage
			if after != "" {
				if _, err := openai.Dialect.RelayEvent(nil, []byte(after), []byte(after), &got); err != nil {
					t.Fatal(err)
				}
			}
			out, err := openai.Dialect.RelayEvent([]byte("x"), ev, d, &got)
			wantOut, wantErr := relayReference([]byte("x"), ev, d, &want)
			if !errors.Is(err, wantErr) || !bytes.Equal(out, wantOut) || got.Usage != want.Usage {
				t.Fatalf("RelayEvent(%q, include usage %v, after %.20q) = %q, %v, usage %+v; want %q, %v, usage %+v",
					data, includeUsage, after, out, err, got.Usage, wantOut, wantErr, want.Usage)
			}
		}
	}
}

// relaySeeds are chunks for TestRelayEventMatchesSearches and
// FuzzRelayEvent: OpenAI's, and the shapes that tell a check that finds
// keys from searches for them.
func relaySeeds() []string {
	return []string{
		chunkContent, chunkFinish, chunkUsage, chunkNoUsage, chunkToolCall, textEscaped, toolArgsStart, toolArgsDelta,
		chunkWire, chunkWireOther, strings.Replace(chunkWireOther, `"khkI7m07"`, `"a\"b"`, 1),
		strings.Replace(chunkWireOther, `"khkI7m07"`, "\"\x01\xff\"", 1), strings.Replace(chunkWireOther, `"khkI7m07"`, `"\\"`, 1),
		strings.Replace(chunkWireOther, `"khkI7m07"`, `"k\"`, 1), strings.Replace(chunkWireOther, `"usage":null`, `"usage":{"prompt_tokens":1}`, 1),
		`{"model":"m","usage":{"prompt_tokens":3,"completion_tokens":4},"choices":[]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4},"model":"m"}`,
		`{"x":{"model":"nested","usage":{"prompt_tokens":1}},"model":"top","usage":{"prompt_tokens":2},"choices":[]}`,
		`{"x":{"usage":7},"usage":{"prompt_tokens":2},"choices":[]}`,
		`{"us\u0061ge":{"prompt_tokens":2},"x":{"usage":{}},"choices":[]}`,
		`{"mod\u0065l":"a","model":"b"}`, `{"model":"we\"ird"}`, `{"model" : "spaced" , "usage" : null }`, `{"model":7}`,
		`{"k":"\"model\":\"x\"","model":"y"}`, `{"k":"a\\","model":"y"}`, `{"usage":{"prompt_tokens":-1},"choices":[]}`,
		`{"usage":{"prompt_tokens":1},"choices":[],"usage":null}`, `{"id":"1","x\"usage":null}`,
		// Azure's first chunk: no choices and no usage, so not the usage chunk.
		`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0}]}`,
		// Moonshot's usage inside the choice, the top-level one null.
		`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":19}}],"usage":null}`,
		"{\"model\":\"a\x01\"}", `{"model":"a\x"}`, `{"model":"a",}`, `{"model":"a"} x`, `[{"model":"a"}]`, `"model"`, `{`,
		`{"model":"m","choices":[` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `]}`,
	}
}

// TestRelayEventMatchesSearches checks that RelayEvent, whose JSON check
// finds the model and usage keys, relays each seed as the searches did.
func TestRelayEventMatchesSearches(t *testing.T) {
	for _, s := range relaySeeds() {
		checkRelay(t, []byte(s))
	}
}

// TestRelayEventRejects checks that what encoding/json rejects ends the
// stream, strings included (sonic.Valid, the check before, took the control
// character and the bad escape), and that what it accepts goes through,
// nesting deeper than sonic's 4096 levels included.
func TestRelayEventRejects(t *testing.T) {
	for _, data := range []string{
		"{\"choices\":[{\"delta\":{\"content\":\"a\x01b\"}}]}", `{"choices":[{"delta":{"content":"\q"}}]}`,
		`{"choices":[]`, `{"choices":[]}}`, `{"choices":[],}`, `{"n":01}`, `{"n":-}`, `{"n":1e}`, `{"n":tru}`,
		`"` + strings.Repeat("x", 40), `{"a":1}{"a":2}`, ``,
	} {
		relay := codec.Relay{Model: "m"}
		ev := []byte("data: " + data + "\n\n")
		if _, err := openai.Dialect.RelayEvent(nil, ev, ev[6:len(ev)-2], &relay); !errors.Is(err, codec.ErrNotJSON) {
			t.Errorf("RelayEvent(%q) = %v, want ErrNotJSON", data, err)
		}
	}
	deep := `{"choices":[],"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	relay := codec.Relay{}
	ev := []byte("data: " + deep + "\n\n")
	if _, err := openai.Dialect.RelayEvent(nil, ev, ev[6:len(ev)-2], &relay); err != nil {
		t.Errorf("RelayEvent on a chunk nested 5001 deep: %v", err)
	}
}

// FuzzRelayEvent holds RelayEvent to relayReference: the same bytes
// relayed, usage read and error, whatever the data.
func FuzzRelayEvent(f *testing.F) {
	for _, s := range relaySeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.ContainsAny(data, "\r\n") {
			return // not one line of data
		}
		checkRelay(t, data)
	})
}
