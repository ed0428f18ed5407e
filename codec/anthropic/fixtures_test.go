package anthropic_test

import (
	"testing"
)

// Fixtures shared by the allocation tests and the benchmarks.

const (
	// textDeltaData is the data of the typical stream event.
	textDeltaData    = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" plan for Kyoto: temples in the morning, markets after lunch."}}`
	messageStartData = `{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01Lm9DxC4vSb7QeR1yHt5KnW","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":31,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}}`
	messageDeltaData = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":31,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":15}}`
	blockStartData   = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
)

func request2KB(tb testing.TB) []byte {
	tb.Helper()
	return readFile(tb, "testdata/messages_2kb.json")
}
