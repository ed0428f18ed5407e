package sse_test

import "strings"

// Realistic streams shared by the tests and the benchmarks.

// openaiChunks are the data of a chat completion stream as OpenAI sends it
// with stream_options.include_usage.
var openaiChunks = []string{
	`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":"! How can I"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":" help \"you\"\\n today?"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
	`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
	`[DONE]`,
}

// typicalEvent is one ~300 B text-delta event, the bulk of a stream.
var typicalEvent = "data: " + openaiChunks[1] + "\n\n"

// event builds an event from its lines, each ended by eol, and the blank line.
func event(eol string, lines ...string) string {
	return strings.Join(lines, eol) + eol + eol
}

// openaiEvents frames openaiChunks with the line ending eol, with a comment
// (as OpenRouter sends) after the first event.
func openaiEvents(eol string) []string {
	var evs []string
	for i, c := range openaiChunks {
		evs = append(evs, event(eol, "data: "+c))
		if i == 0 {
			evs = append(evs, event(eol, ": OPENROUTER PROCESSING"))
		}
	}
	return evs
}

type testStream struct {
	name   string
	events []string // the complete events, blank lines included
	rest   string   // what is left at the end: a last event that is not (yet) complete
}

func (s testStream) bytes() []byte { return []byte(strings.Join(s.events, "") + s.rest) }

var testStreams = []testStream{
	{name: "openai", events: openaiEvents("\n")},
	{name: "openai_crlf", events: openaiEvents("\r\n"),
		rest: "data: [DONE]\r\n\r"}, // a lone "\r" at the end may still become "\r\n"
	{
		// Every event ends in "\r\r"; the final one is not complete at EOF because
		// a "\n" could still follow.
		name:   "openai_cr",
		events: openaiEvents("\r")[:len(openaiEvents("\r"))-1],
		rest:   "data: [DONE]\r\r",
	},
	{
		name: "anthropic",
		events: []string{
			event("\n", "event: message_start", `data: {"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`),
			event("\n", "event: content_block_start", `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			event("\n", "event: ping", `data: {"type": "ping"}`),
			event("\n", "event: content_block_delta", `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`),
			event("\n", "event: content_block_delta", `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!\n\nHow can I help?"}}`),
			event("\n", "event: content_block_stop", `data: {"type":"content_block_stop","index":0}`),
			event("\n", "event: message_delta", `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`),
		},
		// The connection dropped before the blank line.
		rest: "event: message_stop\ndata: {\"type\":\"message_stop\"}\n",
	},
	{
		// A keep-alive that pads with an extra blank line, from a server whose
		// comments end in "\r\n": rare, but framing must not depend on reads.
		name: "blank_lines_mixed",
		events: []string{
			"data: {\"n\":1}\n\n",
			"\n",
			": keep-alive\r\n\r\n",
			"data: {\"n\":2}\n\n",
			"\n",
			"\n",
			"data: {\"n\":3}\r\n\r\n",
		},
	},
}
