package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestReadRelayed: a whole response's top-level model and usage, in one
// pass that also checks the JSON; nested members of the same names are
// not taken for them.
func TestReadRelayed(t *testing.T) {
	for _, c := range []struct {
		body  string
		model string // "" for none
		usage codec.Usage
		ok    bool
	}{
		{`{"id":"x","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`, "gpt-4o",
			codec.Usage{Input: 3, Output: 4}, true},
		{"{\n  \"model\": \"m\",\n  \"usage\": {\n    \"prompt_tokens\": 8,\n    \"total_tokens\": 8\n  }\n}", "m",
			codec.Usage{Input: 8}, true},
		{`{"choices":[{"model":"nested","usage":{"prompt_tokens":1}}],"model":"top","usage":null}`, "top", codec.Usage{}, true},
		{`{"model":"esc\"aped","usage":{"prompt_tokens":2}}`, "", codec.Usage{Input: 2}, true},
		{`{"data":[{"embedding":[0.1,-2e-3]}],"model":"e","usage":{"prompt_tokens":5,"total_tokens":5}}`, "e",
			codec.Usage{Input: 5}, true},
		{`{"model":"m","usage":{"prompt_tokens":"x"}}`, "m", codec.Usage{}, true},
		{`{"model":"m"`, "", codec.Usage{}, false},
		{"{\"model\":\"m\",\"x\":\"\x01\"}", "", codec.Usage{}, false},
	} {
		r, ok := Dialect.ReadRelayed([]byte(c.body))
		if ok != c.ok {
			t.Errorf("%s: ok %v", c.body, ok)
			continue
		}
		if !ok {
			continue
		}
		model := ""
		if r.ModelStart >= 0 {
			model = c.body[r.ModelStart:r.ModelEnd]
		}
		if model != c.model || r.Usage != c.usage || r.HasUsage != (c.usage != codec.Usage{}) {
			t.Errorf("%s: model %q usage %+v (%v)", c.body, model, r.Usage, r.HasUsage)
		}
	}
}

// readRelayedReference is what ReadRelayed must find, read as a client's
// JSON parser reads the answer: a check (here encoding/json's), then the
// last top-level model and usage, keys compared unescaped, each read in a
// pass of its own.
func readRelayedReference(body []byte, k *usageKeys) (codec.Relayed, bool) {
	if !json.Valid(body) {
		return codec.Relayed{}, false
	}
	r := codec.Relayed{ModelStart: -1, ModelEnd: -1}
	if v := lastMember(body, "model"); v != nil {
		r.ModelStart, r.ModelEnd = modelSpanAt(body, cap(body)-cap(v))
	}
	if v := lastMember(body, "usage"); rawjson.KindOf(v) == rawjson.KindObject {
		if u, err := decodeUsageReference(v, k); err == nil {
			r.Usage, r.HasUsage = u, true
		}
	}
	return r, true
}

// lastMember is the value of the last top-level member of b whose key
// decodes to key, or nil.
func lastMember(b []byte, key string) []byte {
	var last []byte
	for m := rawjson.Members(b); m.Next(); {
		if keyName(m.Key()) == key {
			last = m.Value()
		}
	}
	return last
}

// keyName is the key spelled k between its quotes, decoded.
func keyName(k []byte) string {
	name, _ := rawjson.Unquote([]byte(`"` + string(k) + `"`))
	return name
}

// decodeUsageReference reads a checked usage object a member at a time,
// each in a pass of its own: the last of a repeated member counts, and so
// does its error alone (one that a later occurrence replaces is not read).
func decodeUsageReference(b []byte, k *usageKeys) (u codec.Usage, err error) {
	detail := func(v []byte, key string) (int, error) {
		switch rawjson.KindOf(v) {
		case rawjson.KindNull:
			return 0, nil
		case rawjson.KindObject:
		default:
			return 0, errors.New("not a details object")
		}
		if v := lastMember(v, key); v != nil {
			return count(v)
		}
		return 0, nil
	}
	for _, m := range []struct {
		key, detail string
		n           *int
	}{{k.input, "", &u.Input}, {k.output, "", &u.Output}, {k.inputDetails, "cached_tokens", &u.CachedInput}, {k.outputDetails, "reasoning_tokens", &u.Reasoning}} {
		v := lastMember(b, m.key)
		if v == nil {
			continue
		}
		var e error
		if m.detail == "" {
			*m.n, e = count(v)
		} else {
			*m.n, e = detail(v, m.detail)
		}
		if err == nil {
			err = e
		}
	}
	return u, err
}

// FuzzReadRelayed holds ReadRelayed, which reads the usage as it checks
// the answer, to readRelayedReference, for chat and Responses answers.
func FuzzReadRelayed(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
		`{"model":"m","usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2},"completion_tokens_details":null}}`,
		`{"usage":{"prompt_tokens":1,"prompt_tokens":2},"usage":{"prompt_tokens":5},"model":"a","model":"b"}`,
		`{"usage":{"completion_tokens_details":5}}`, `{"usage":{"prompt_tokens_details":{"cached_tokens":-1}}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":1,}}}`, `{"usage":{"prompt_tokens":01}}`, `{"usage":{"x":[}}`,
		`{"usage":{"prompt_tokens_details":nul}}`, `{"usage":{"prompt_tokens_details":nullx}}`, `{"usage":{"prompt_tokens_details":`,
		`{"usage":{"input_tokens":7,"output_tokens_details":{"reasoning_tokens":2}}}`, `[1]`, `"x"`, ` {} `, `{"usage":{}} x`,
		`{"usage":{"prompt_tokens":0,"completion_tokens":12 ,"prompt_tokens_details":{"cached_tokens":3}}}`,
		`{"usage":{"prompt_tokens":1234567890123456789,"completion_tokens":-0}}`, `{"usage":{"prompt_tokens":7]}}`,
		`{"usage":{"prompt_tokens":1.5,"completion_tokens":2e1}}`, `{"usage":{"completion_tokens":00}}`,
		`{"usage":{"prompt_tokens_details":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}`,
		`{"usage":{"prompt_tokens_details":{"a":` + strings.Repeat("[", 9996) + strings.Repeat("]", 9996) + `}}}`,
		`{"usage":{"prompt_tokens_details":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`,
		`{"usage":{"prompt_tokens_details":{"a":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}}`,
		`{"usage":{"x":{"a":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}}`,
	} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile("../../proxy/testdata/chat_response.json"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, k := range []*usageKeys{&chatUsage, &responsesUsage} {
			got, ok := readRelayed(body, k)
			want, wantOK := readRelayedReference(body, k)
			read := got
			read.Again, read.Keys, read.UsageAt = false, nil, 0
			if ok != wantOK || ok && read != want {
				t.Fatalf("readRelayed(%q) = %+v, %v; want %+v, %v", body, got, ok, want, wantOK)
			}
			if !ok {
				continue
			}
			for _, model := range []string{"pub", ""} { // renamed, and kept as the proxy keeps it
				relayed := body
				if got.Again {
					relayed = got.AppendRelayed(nil, body, model)
				}
				first, last := billed(testutil.FirstWins(relayed), k), billed(testutil.LastWins(relayed), k)
				if got.Again && model != "" {
					// A renamed answer's every string model is the public
					// name; a model of another kind is left as it is
					// (codec.Edit), and names none, as the stream relays
					// leave it (FuzzRelayRenamed): one reader may find the
					// name where another finds no model.
					for _, m := range []any{first[0], last[0]} {
						if m != nil && m != model {
							t.Fatalf("readRelayed(%q) = %+v: relayed (model %q) as %q, a model %q left", body, got, model, relayed, m)
						}
					}
					first[0], last[0] = nil, nil
				}
				if !reflect.DeepEqual(first, last) {
					t.Fatalf("readRelayed(%q) = %+v: relayed (model %q) as %q, a first-wins reader reads %v, a last-wins one %v", body, got, model, relayed, first, last)
				}
			}
		}
	})
}

// TestReadRelayedAsClientsRead: an answer whose read keys are each
// repeated with another value, and spelled with escapes, is billed and
// renamed as encoding/json (and Python's json, JavaScript's JSON.parse)
// reads it: the last occurrence of a key, compared unescaped.
func TestReadRelayedAsClientsRead(t *testing.T) {
	for _, c := range []struct {
		k                            *usageKeys
		in, out, inDetail, outDetail string
	}{
		{&chatUsage, "prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"},
		{&responsesUsage, "input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"},
	} {
		usage := `{"` + c.in + `":1,"` + c.out + `":2,"` + c.inDetail + `":{"cached_tokens":3,"cached_tokens":4},` +
			`"` + c.outDetail + `":{"reasoning_tokens":5},"\u0063ompletion_tokens_details":{"reasoning_tokens":6},` +
			`"` + c.outDetail + `":{"reasoning_tokens":7,"re\u0061soning_tokens":8},` +
			`"` + escapeFirst(c.in) + `":9,"` + c.out + `":10,"` + c.inDetail + `":{"cached_tokens":11,"c\u0061ched_tokens":12}}`
		body := `{"model":"a","usage":{"` + c.in + `":100},"mod\u0065l":"b","us\u0061ge":` + usage + `,"model":"c","x":{"model":"d"}}`
		want := clientUsage(t, usage, c.in, c.out, c.inDetail, c.outDetail)
		if want != (codec.Usage{Input: 9, Output: 10, CachedInput: 12, Reasoning: 8}) {
			t.Fatalf("encoding/json reads %+v", want) // the test's own premise
		}
		r, ok := readRelayed([]byte(body), c.k)
		if !ok || !r.HasUsage || r.Usage != want || body[r.ModelStart:r.ModelEnd] != "c" {
			t.Errorf("readRelayed(%s) = %+v, %v; want usage %+v, model c", body, r, ok, want)
		}
		if u, err := decodeUsage([]byte(usage), c.k); err != nil || u != want {
			t.Errorf("decodeUsage(%s) = %+v, %v; want %+v", usage, u, err, want)
		}
		// The last usage, when not an object, leaves none.
		if r, ok := readRelayed([]byte(`{"usage":`+usage+`,"usage":null}`), c.k); !ok || r.HasUsage {
			t.Errorf("a usage followed by null: %+v, %v", r, ok)
		}
	}
	if u, err := DecodeResponsesUsage([]byte(`{"input_tokens":1,"input_tokens":2,"output_t\u006fkens":3}`)); err != nil || u != (codec.Usage{Input: 2, Output: 3}) {
		t.Errorf("DecodeResponsesUsage = %+v, %v", u, err)
	}
	if u, err := DecodeUsage([]byte(`{"prompt_tokens":1,"prompt_tokens":2,"completion_t\u006fkens":3}`)); err != nil || u != (codec.Usage{Input: 2, Output: 3}) {
		t.Errorf("DecodeUsage = %+v, %v", u, err)
	}
}

// escapeFirst spells key's first letter as a \u escape.
func escapeFirst(key string) string { return fmt.Sprintf(`\u%04x`, key[0]) + key[1:] }

// clientUsage is the usage encoding/json decodes from the usage object b
// into a generic value, as a client without the API's types reads it.
func clientUsage(t *testing.T, b, in, out, inDetail, outDetail string) codec.Usage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		t.Fatal(err)
	}
	num := func(m map[string]any, key string) int {
		f, _ := m[key].(float64)
		return int(f)
	}
	detail := func(key, count string) int {
		d, _ := m[key].(map[string]any)
		return num(d, count)
	}
	return codec.Usage{Input: num(m, in), Output: num(m, out),
		CachedInput: detail(inDetail, "cached_tokens"), Reasoning: detail(outDetail, "reasoning_tokens")}
}

// billed is what a reader that decoded an answer into v reads of its
// model and of the counts the gateway bills.
func billed(v any, k *usageKeys) [5]any {
	m, _ := v.(map[string]any)
	u, _ := m["usage"].(map[string]any)
	in, _ := u[k.inputDetails].(map[string]any)
	out, _ := u[k.outputDetails].(map[string]any)
	var model any // nil: no name, as the SDKs' type (a string) reads no other value
	if s, ok := m["model"].(string); ok {
		model = s
	}
	count := func(m map[string]any, key string) any {
		if n, ok := m[key].(float64); ok { // the SDKs' type again: no count is read from another value
			return n
		}
		return nil
	}
	return [5]any{model, count(u, k.input), count(u, k.output), count(in, "cached_tokens"), count(out, "reasoning_tokens")}
}
