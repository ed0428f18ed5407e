package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMockChunksAsOpenAI checks that the mock's stream chunks are shaped as
// api.openai.com's: valid JSON, "usage":null on every chunk but the usage
// chunk when include_usage is set and on none otherwise, and an obfuscation
// string of 2 to 14 characters last, of more than one length in a stream.
func TestMockChunksAsOpenAI(t *testing.T) {
	r := renderReply("gpt-4o-mini", 20)
	for _, c := range []struct {
		evs     [][]byte
		withUse bool
	}{{r.events, false}, {r.eventsUse, true}} {
		lengths := map[int]bool{}
		for _, ev := range c.evs[:len(c.evs)-1] {
			data := bytes.TrimSuffix(bytes.TrimPrefix(ev, []byte("data: ")), []byte("\n\n"))
			var chunk struct {
				Usage       json.RawMessage `json:"usage"`
				Obfuscation string          `json:"obfuscation"`
			}
			if err := json.Unmarshal(data, &chunk); err != nil {
				t.Fatalf("chunk %s: %v", data, err)
			}
			usageChunk := len(chunk.Usage) > 0 && chunk.Usage[0] == '{'
			if nullUsage := string(chunk.Usage) == "null"; !usageChunk && nullUsage != c.withUse {
				t.Errorf("include_usage %v, chunk %s", c.withUse, data)
			}
			n := len(chunk.Obfuscation)
			if n < 2 || n > 14 || !bytes.HasSuffix(data, []byte(`,"obfuscation":"`+chunk.Obfuscation+`"}`)) {
				t.Errorf("chunk does not end with an obfuscation string of 2 to 14 characters: %s", data)
			}
			lengths[n] = true
		}
		if len(lengths) < 2 {
			t.Errorf("include_usage %v: every obfuscation string is as long: %v", c.withUse, lengths)
		}
	}
}
