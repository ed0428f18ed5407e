package rawjson

import (
	"strings"
	"testing"
)

// TestShapeTakesDeltas checks that the text deltas of a stream are checked
// by their text alone once a first one is kept, and api.openai.com's by
// their text and obfuscation string, so that the fast path cannot quietly
// stop being taken.
func TestShapeTakesDeltas(t *testing.T) {
	keys, at := []string{"content", "model"}, make([]int, 2)
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`
	plain := func(text, _ string) []byte {
		return []byte(head + text + `"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	}
	wire := func(text, obfuscation string) []byte {
		return []byte(head + text + `"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"` + obfuscation + `"}`)
	}
	obfuscations := []string{"dBNii", "khkI7m07", "", "vN", `\"`, `\\`, `\u00e9\n`, "é", "tzhe6SVI34Zwh"}
	for name, chunk := range map[string]func(text, obfuscation string) []byte{"plain": plain, "api.openai.com": wire} {
		var s Shape
		if !s.ValidKeys(chunk("first", "P00ZklmC"), keys, at, 0) || len(s.doc) == 0 {
			t.Fatalf("%s: the first delta was not kept", name)
		}
		for i, text := range strings.Fields("the gateway relays each event as it arrives \\\"and\\\" \\u00e9") {
			if _, ok := s.match(chunk(text, obfuscations[i%len(obfuscations)])); !ok {
				t.Fatalf("%s: a delta of %q was checked whole", name, text)
			}
		}
	}
}

// TestShapeChecksFromSplit checks that a stream's chunks of other shapes
// (finish, usage) that begin as the kept delta does are checked from its
// split on, not whole, so that the cut cannot quietly stop being taken.
func TestShapeChecksFromSplit(t *testing.T) {
	keys, at := []string{"content", "model", "usage", "choices"}, make([]int, 4)
	const top = 1<<2 | 1<<3
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",`
	var s Shape
	if !s.ValidKeys([]byte(head+`"choices":[{"index":0,"delta":{"content":"a"}}],"usage":null,"obfuscation":"x"}`), keys, at, top) ||
		s.split != len(head) {
		t.Fatalf("the delta was not kept with its split before \"choices\" (split %d, want %d)", s.split, len(head))
	}
	for _, doc := range []string{
		head + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null,"obfuscation":"xy"}`,
		head + `"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"obfuscation":"xyz"}`,
	} {
		if valid, checked := s.validFromSplit([]byte(doc), keys, at, top); !valid || !checked {
			t.Fatalf("%s: valid %v, checked from the split %v; want both", doc, valid, checked)
		}
	}
}
