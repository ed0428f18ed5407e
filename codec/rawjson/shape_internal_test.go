package rawjson

import (
	"strings"
	"testing"
)

// TestShapeTakesDeltas checks that the text deltas of a stream are checked
// by their text alone once a first one is kept, so that the fast path
// cannot quietly stop being taken.
func TestShapeTakesDeltas(t *testing.T) {
	keys, at := []string{"content", "model"}, make([]int, 2)
	chunk := func(text string) []byte {
		return []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` +
			text + `"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	}
	var s Shape
	if !s.ValidKeys(chunk("first"), keys, at, 0) || len(s.doc) == 0 {
		t.Fatal("the first delta was not kept")
	}
	for _, text := range strings.Fields("the gateway relays each event as it arrives \\\"and\\\" \\u00e9") {
		if !s.same(chunk(text)) {
			t.Fatalf("a delta of %q was checked whole", text)
		}
	}
}
