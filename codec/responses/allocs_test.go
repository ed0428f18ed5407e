//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package responses_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	rc "github.com/rosetta-gateway/rosetta/codec/responses"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestDecodeRequestAllocs: the one-pass reader allocates only what the
// canonical request must own: the 2 KB request's two strings with escapes
// (a call's arguments, its output), the output's content and the
// temperature, 4 in all; a request of plain strings none but the
// temperature's.
func TestDecodeRequestAllocs(t *testing.T) {
	for _, c := range []struct {
		name   string
		body   []byte
		budget float64
	}{
		{"2 KB request", goldentest.Read(t, "testdata/request_2kb.json"), 4},
		{"plain request", []byte(`{"model":"m","instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},` +
			`{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"e"}],"temperature":0.2,` +
			`"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":{"type":"function","name":"f"}}`), 1},
	} {
		var r codec.Request
		if err := rc.DecodeRequest(c.body, &r); err != nil {
			t.Fatal(err)
		}
		testutil.Allocs(t, c.name, c.budget, func() {
			if err := rc.DecodeRequest(c.body, &r); err != nil {
				panic(err)
			}
		})
	}
}

// TestLongAnswerAllocs: once the spill pools hold a long answer's buffers
// (the warm-up run), streaming it again allocates nothing, 200 KB of text
// past what the encoder keeps as its own.
func TestLongAnswerAllocs(t *testing.T) {
	events, _ := longAnswer(3000, 0)
	var e rc.StreamEncoder
	out := make([]byte, 0, 1<<20)
	testutil.AllocsN(t, 10, "a 200 KB answer", 0, func() {
		e.Reset(codec.StreamInfo{ID: "resp_1", Model: "m"})
		for i := range events {
			out = e.Encode(out[:0], &events[i])
		}
		out = e.End(out[:0])
	})
}
