package openai_test

import (
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// BenchmarkResponsesRelayDelta relays one response.output_text.delta
// event, the bulk of a Responses stream, with the model put back: plain
// text, and text with escapes (a new line, quotes; ResponseStream takes
// the text as it stands between quotes).
func BenchmarkResponsesRelayDelta(b *testing.B) {
	for _, c := range []struct{ name, text string }{{"plain", "Hello"}, {"escaped", `Hello,\n\"you\"`}} {
		stream := testutil.ResponseStream("resp_7", "gpt-4o-2024-08-06", c.text)
		at := strings.Index(stream, "event: response.output_text.delta")
		ev := []byte(stream[at : at+strings.Index(stream[at:], "\n\n")+2])
		tc := new(codec.Transcoder)
		tc.ResetPass(openai.Responses, codec.Relay{Model: "fast"}, nil)
		out := make([]byte, 0, 1024)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(ev)))
			for b.Loop() {
				if o, n := tc.Transcode(out[:0], ev); n != len(ev) || len(o) == 0 {
					b.Fatal("not relayed")
				}
			}
		})
	}
}

// BenchmarkResponsesRelayStream relays a whole Responses stream of ten
// deltas: four lifecycle events read for their id, status, usage and
// model, and the others checked.
func BenchmarkResponsesRelayStream(b *testing.B) {
	stream := []byte(testutil.ResponseStream("resp_7", "gpt-4o-2024-08-06",
		"One", " two", " three", " four", " five", " six", " seven", " eight", " nine", " ten"))
	tc := new(codec.Transcoder)
	out := make([]byte, 0, 2*len(stream))
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		tc.ResetPass(openai.Responses, codec.Relay{Model: "fast"}, nil)
		if _, n := tc.Transcode(out[:0], stream); n != len(stream) || tc.Relayed().Usage.Output == 0 {
			b.Fatal("not relayed")
		}
	}
}

// BenchmarkResponsesReadRelayed is what the gateway reads of a whole
// response it relays: the check, the model, the usage, the id and status.
func BenchmarkResponsesReadRelayed(b *testing.B) {
	body := []byte(testutil.ResponseObject("resp_1", "gpt-4o-2024-08-06", "completed", "Hello there"))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r, ok := openai.Responses.ReadRelayed(body)
		if id, _ := openai.ResponseState(body); !ok || !r.HasUsage || id == nil {
			b.Fatal("not read")
		}
	}
}

// BenchmarkResponseState reads a response's id and status: OpenAI names
// them first; a compatible server may put its status after the output,
// which is then passed over, not checked again.
func BenchmarkResponseState(b *testing.B) {
	early := testutil.ResponseObject("resp_1", "gpt-4o-2024-08-06", "completed", strings.Repeat("Hello there. ", 40))
	late := strings.Replace(early, `"status":"completed",`, "", 1)
	late = strings.TrimSuffix(late, "}") + `,"status":"completed"}`
	for _, c := range []struct{ name, body string }{{"early", early}, {"late", late}} {
		body := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if id, status := openai.ResponseState(body); id == nil || status == nil {
					b.Fatal("not read")
				}
			}
		})
	}
}
