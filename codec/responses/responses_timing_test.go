package responses_test

import (
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	rc "github.com/rosetta-gateway/rosetta/codec/responses"
	"github.com/rosetta-gateway/rosetta/internal/proctime"
)

// The DESIGN §5 budgets as the Responses style meets them on its own
// half: decoding a 2 KB request (the translation to each upstream, decode
// and encode together, is codec's BenchmarkPairsTranslateRequest2KB),
// encoding one text delta, and a whole response. cpu-ns/op is the
// process's CPU time per operation, steadier than ns/op on a shared
// machine.

// reportCPU reports the process's CPU time since start per operation.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(proctime.CPU()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkDecodeRequest2KB(b *testing.B) {
	body := goldentest.Read(b, "testdata/request_2kb.json")
	var r codec.Request
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	defer reportCPU(b, proctime.CPU())
	for b.Loop() {
		if err := rc.DecodeRequest(body, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeTextDelta(b *testing.B) {
	var e rc.StreamEncoder
	e.Reset(codec.StreamInfo{ID: "resp_req_0123456789abcdef01234567", Model: "public-model", Created: 1795252445})
	var out []byte
	out = e.Encode(out, &codec.Event{Kind: codec.EventStart})
	out = e.Encode(out, &codec.Event{Kind: codec.EventBlockStart, Block: codec.PartText})
	delta := codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: " the quick brown fox"}
	b.ReportAllocs()
	defer reportCPU(b, proctime.CPU())
	n := 0
	for b.Loop() {
		out = e.Encode(out[:0], &delta)
		if n++; n == 1<<16 { // the output text grows with every delta: start a stream again
			e.Reset(codec.StreamInfo{ID: "resp_req_0123456789abcdef01234567", Model: "public-model", Created: 1795252445})
			out = e.Encode(out[:0], &codec.Event{Kind: codec.EventBlockStart, Block: codec.PartText})
			n = 0
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	var req codec.Request
	if err := rc.DecodeRequest(goldentest.Read(b, "testdata/request_2kb.json"), &req); err != nil {
		b.Fatal(err)
	}
	resp := codec.Response{Parts: []codec.Part{
		{Kind: codec.PartThinking, Text: "The customer wants a comparison.", Signature: "EqQBCkYIBxgCKkB0aGlua2luZw=="},
		{Kind: codec.PartText, Text: "The Corolla Hybrid has 13.1 cu ft of cargo space, the Prius 20.3; both come with Toyota Safety Sense 3.0."},
		{Kind: codec.PartToolCall, ID: "toolu_01", Name: "lookup_car", Arguments: `{"make":"Toyota","color":"blue"}`},
	}, Stop: codec.StopToolUse, Usage: codec.Usage{Input: 512, Output: 96, Reasoning: 20}}
	info := codec.StreamInfo{ID: "resp_req_0123456789abcdef01234567", Model: "public-model", Created: 1795252445, Origin: "anthropic", Request: &req}
	var out []byte
	b.ReportAllocs()
	defer reportCPU(b, proctime.CPU())
	for b.Loop() {
		out = rc.AppendResponse(out[:0], &resp, info)
	}
}

// BenchmarkPrepend: a turn continued by previous_response_id, its stored
// input items (a 2 KB request's) and output put before the new input.
func BenchmarkPrepend(b *testing.B) {
	var req codec.Request
	if err := rc.DecodeRequest(goldentest.Read(b, "testdata/request_2kb.json"), &req); err != nil {
		b.Fatal(err)
	}
	input := rc.AppendInputItems(nil, &req)
	resp := codec.Response{Parts: []codec.Part{
		{Kind: codec.PartThinking, Text: "Compare cargo space and safety.", Signature: "EqQBCkYIBxgCKkB0aGlua2luZw=="},
		{Kind: codec.PartText, Text: "The Corolla Hybrid has 13.1 cu ft of cargo space, the Prius 20.3; both come with Toyota Safety Sense 3.0."},
	}, Stop: codec.StopEnd}
	output := rc.AppendOutput(nil, &resp, "resp_req_0123456789abcdef01234567", codec.DialectAnthropic)
	body := []byte(`{"model":"gpt-5","previous_response_id":"resp_req_0123456789abcdef01234567","input":"Which one is blue?","store":true}`)
	var out []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(input) + len(output) + len(body)))
	defer reportCPU(b, proctime.CPU())
	for b.Loop() {
		var err *codec.Error
		if out, err = rc.Prepend(out[:0], body, input, output); err != nil {
			b.Fatal(err)
		}
	}
}
