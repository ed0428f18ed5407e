package openai_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// Realistic bodies shared by the tests and the benchmarks.

// Stream chunks as OpenAI sends them (stream_options.include_usage on).
const (
	chunkRole    = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`
	chunkContent = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`
	chunkFinish  = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`
	chunkUsage   = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`
	// Without include_usage there is no "usage" member at all.
	chunkNoUsage = `{"id":"chatcmpl-AQ9pZ1yBx6Hc4t7uLrWmKsEnVd2Ff","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}`
	// Text deltas as api.openai.com sends them, each with an obfuscation
	// string of random length last (../testdata/wire/openai/chat_stream_length.sse).
	chunkWire      = `{"id":"chatcmpl-CkR9bX4fY1oAqN6zP0dA3hHj5uL8c","object":"chat.completion.chunk","created":1795252445,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6f2eabb9a5","choices":[{"index":0,"delta":{"content":" is"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"dBNii"}`
	chunkWireOther = `{"id":"chatcmpl-CkR9bX4fY1oAqN6zP0dA3hHj5uL8c","object":"chat.completion.chunk","created":1795252445,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6f2eabb9a5","choices":[{"index":0,"delta":{"content":" sprawling"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"khkI7m07"}`
	// A tool call whose arguments mention "model" and "usage".
	chunkToolCall = `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"model\":\"x\",\"usage\":{\"a\":1}}"}}]},"finish_reason":null}],"usage":null}`
)

// chatRequest2KB is a ~2 KB chat request with tools, its model first.
func chatRequest2KB(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/chat_2kb.json")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// chatRequest3KB is chatRequest2KB with two more turns of conversation at
// the start of its messages: ~3 KB.
func chatRequest3KB(tb testing.TB) []byte {
	tb.Helper()
	const turns = `{"role":"user","content":"Before we start: I drive about 40 miles a day, mostly highway, and I park on the street, so I care about fuel economy, a good warranty and a car that is not too long. My budget is firm."},` +
		`{"role":"assistant","content":"Thanks, that helps. For 40 highway miles a day a hybrid sedan is a good fit: most average 45 to 55 mpg on the highway, come with an 8-year hybrid battery warranty and are under 185 inches long, which makes street parking easier. I will check what we have in stock."},` +
		`{"role":"user","content":"Great. Also, I would rather avoid anything with a CVT if possible, and I need Apple CarPlay."},` +
		`{"role":"assistant","content":"Noted: no CVT if we can avoid it, and Apple CarPlay is a must. Toyota's hybrids use an eCVT, which is a planetary gear set rather than a belt CVT, so it has a much better reliability record; I will point out which trims have wireless CarPlay."},`
	b := chatRequest2KB(tb)
	i := bytes.Index(b, []byte(`"messages":[`))
	if i < 0 {
		tb.Fatal("no messages")
	}
	i += len(`"messages":[`)
	return append(append(append([]byte(nil), b[:i]...), turns...), b[i:]...)
}

// imageRequest returns a ~1 MB streamed chat request carrying a base64 image,
// with its model last.
func imageRequest() []byte {
	img := make([]byte, 3<<18) // 768 KiB, 1 MiB in base64
	for i := range img {
		img[i] = byte(i*7 + i>>9)
	}
	return fmt.Appendf(nil, `{"messages":[{"role":"user","content":[{"type":"text","text":"What is in this image?"},`+
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,%s","detail":"high"}}]}],"max_tokens":300,"stream":true,"model":"gpt-4o"}`,
		base64.StdEncoding.EncodeToString(img))
}

// relay is relayEvent's stream state (the events it relays are one
// stream's), kept outside it: a Relay handed to
// RelayEvent through the Dialect interface would be allocated per call.
var relay codec.Relay

// relayEvent does what the pass-through relay does with the first event in
// in: frame it, find its data and hand it to the dialect's RelayEvent, which
// checks that it is JSON, reads its usage (leaving out the usage chunk the
// client did not ask for) and splices the client's model name into the copy
// it appends to dst. It returns dst and the event length, and panics on an
// event RelayEvent rejects.
func relayEvent(dst, in []byte, model string) ([]byte, int) {
	n := sse.Next(in)
	ev := in[:n]
	data, multi, ok := sse.Data(ev)
	if !ok || multi || sse.IsDone(data) {
		return append(dst, ev...), n
	}
	relay = codec.Relay{Model: model, Shape: relay.Shape} // one stream: the check keeps its shape
	dst, err := openai.Dialect.RelayEvent(dst, ev, data, &relay)
	if err != nil {
		panic(err)
	}
	return dst, n
}
