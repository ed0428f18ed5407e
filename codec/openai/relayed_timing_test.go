package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// BenchmarkReadRelayed is what the gateway reads of a whole chat response
// it relays: the JSON check, the model's span and the usage; of OpenAI's
// indented answer and of the same compact (as the bench's mock sends it).
func BenchmarkReadRelayed(b *testing.B) {
	body, err := os.ReadFile("../../proxy/testdata/chat_response.json")
	if err != nil {
		b.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		b.Fatal(err)
	}
	for name, body := range map[string][]byte{"indented": body, "compact": compact.Bytes()} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if r, ok := Dialect.ReadRelayed(body); !ok || r.ModelStart < 0 || !r.HasUsage {
					b.Fatal("not read")
				}
			}
		})
	}
}
