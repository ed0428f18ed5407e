package openai

import (
	"os"
	"testing"
)

// BenchmarkReadRelayed is what the gateway reads of a whole chat response
// it relays: the JSON check, the model's span and the usage.
func BenchmarkReadRelayed(b *testing.B) {
	body, err := os.ReadFile("../../proxy/testdata/chat_response.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if r, ok := Dialect.ReadRelayed(body); !ok || r.ModelStart < 0 || !r.HasUsage {
			b.Fatal("not read")
		}
	}
}
