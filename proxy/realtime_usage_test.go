package proxy

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

// TestRealtimeUsageCountsChecked: a response.done's usage is added to the
// session's only when each of its counts is a count (0 to 18 digits, as
// every other usage reader reads them): a negative one, or one whose sum
// would wrap, adds nothing, so that the session's usage row and the limits
// it settles are never handed a negative count.
func TestRealtimeUsageCountsChecked(t *testing.T) {
	s := &session{x: &exchange{model: "m"}, events: usageEvents}
	done := func(usage string) []byte {
		return []byte(`{"type":"response.done","event_id":"e","response":{"id":"r","status":"completed","usage":` + usage + `}}`)
	}
	for _, u := range []string{
		`{"total_tokens":12,"input_tokens":5,"output_tokens":7,"input_token_details":{"cached_tokens":2},"output_token_details":{"reasoning_tokens":1}}`,
		`{"input_tokens":-5,"output_tokens":7}`,
		`{"input_tokens":5,"output_tokens":7,"input_token_details":{"cached_tokens":-1}}`,
		`{"input_tokens":9223372036854775807,"output_tokens":7}`,
		`{"input_tokens":1000000000000000000,"output_tokens":7}`,
		`{"input_tokens":3,"output_tokens":4}`,
	} {
		s.fromUpstream(done(u))
	}
	if want := (codec.Usage{Input: 8, Output: 11, CachedInput: 2, Reasoning: 1}); s.usage != want {
		t.Errorf("the session's usage is %+v, want %+v", s.usage, want)
	}
}
