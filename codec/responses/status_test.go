package responses_test

import (
	"encoding/json"
	"testing"

	sdk "github.com/openai/openai-go/v3/responses"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/responses"
)

// TestIncompleteItemStatus: a response cut by its output limit after a
// text and in the middle of a function call, its blocks ended before the
// upstream says why (as Anthropic's stream does): the call, the item cut,
// is incomplete in its output_item.done, in response.incomplete and in the
// whole Response; the text before it completed. With a natural end both
// are completed.
func TestIncompleteItemStatus(t *testing.T) {
	f := func(stop codec.StopReason, args string, want ...string) {
		t.Helper()
		events := []codec.Event{
			{Kind: codec.EventBlockStart, Block: codec.PartText},
			{Kind: codec.EventDelta, Block: codec.PartText, Text: "Checking."},
			{Kind: codec.EventBlockStop},
			{Kind: codec.EventBlockStart, Block: codec.PartToolCall, ID: "call_1", Name: "get_weather"},
			{Kind: codec.EventDelta, Block: codec.PartToolCall, Arguments: args},
			{Kind: codec.EventBlockStop},
			{Kind: codec.EventFinish, Stop: stop},
			{Kind: codec.EventUsage, Usage: codec.Usage{Input: 5, Output: 7}},
		}
		info := codec.StreamInfo{ID: "resp_t", Model: "m", Created: 1}
		var e responses.StreamEncoder
		e.Reset(info)
		var out []byte
		for i := range events {
			out = e.Encode(out, &events[i])
		}
		streamed := checkStream(t, e.End(out)) // output_item.done agrees with the last event
		var whole sdk.Response
		if err := json.Unmarshal(responses.AppendResponse(nil, e.Response(), info), &whole); err != nil {
			t.Fatal(err)
		}
		checkResponse(t, &whole)
		for _, r := range []*sdk.Response{streamed, &whole} {
			if len(r.Output) != len(want) {
				t.Fatalf("output %s", r.RawJSON())
			}
			for i, w := range want {
				if r.Output[i].Status != w {
					t.Errorf("%s: item %d is %q, want %q", r.Status, i, r.Output[i].Status, w)
				}
			}
		}
	}
	f(codec.StopMaxTokens, `{"city":"Par`, "completed", "incomplete")
	f(codec.StopToolUse, `{"city":"Paris"}`, "completed", "completed")
}
