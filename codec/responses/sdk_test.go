package responses_test

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/responses"

	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// The goldens of testdata/responses_to_*/ (written by codec's pairs tests)
// must be what openai-go reads: every Response and event parses into the
// SDK's types with no member the SDK does not know, events carry their
// type twice and sequence numbers from 0, and the SDK's accumulator
// rebuilds from each stream the response its last event gives.

func TestGoldenResponsesParseWithSDK(t *testing.T) {
	paths, _ := filepath.Glob("testdata/responses_to_*/response_*.json")
	if len(paths) == 0 {
		t.Fatal("no response goldens")
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			var r responses.Response
			if err := json.Unmarshal(goldentest.Read(t, p), &r); err != nil {
				t.Fatal(err)
			}
			checkResponse(t, &r)
		})
	}
}

// checkResponse checks what every Response the gateway writes holds.
func checkResponse(t *testing.T, r *responses.Response) {
	t.Helper()
	if !strings.HasPrefix(r.ID, "resp_") || r.Object != "response" || r.CreatedAt == 0 || r.Model == "" {
		t.Errorf("id %q, object %q, created_at %v, model %q", r.ID, r.Object, r.CreatedAt, r.Model)
	}
	// store is echoed as OpenAI's own answers do, though the SDK's type
	// has no field for it.
	extra := maps.Clone(r.JSON.ExtraFields)
	delete(extra, "store")
	noExtra(t, "response", extra)
	switch r.Status {
	case "completed", "failed":
	case "incomplete":
		if r.IncompleteDetails.Reason == "" {
			t.Error("incomplete without a reason")
		}
	default:
		t.Errorf("status %q", r.Status)
	}
	u := r.Usage
	if r.Status != "failed" && u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage %+v", u)
	}
	for i, it := range r.Output {
		if !strings.HasSuffix(it.ID, "_"+strconv.Itoa(i)) {
			t.Errorf("item %d has id %q", i, it.ID)
		}
		if want := wantItemStatus(r, i); it.Type != "reasoning" && it.Status != want {
			t.Errorf("item %d (%s) of a response %s is %q, want %q", i, it.Type, r.Status, it.Status, want)
		}
		switch it.Type {
		case "message":
			m := it.AsMessage()
			noExtra(t, "message", m.JSON.ExtraFields)
			for _, c := range m.Content {
				text := c.AsOutputText()
				if c.Type != "output_text" {
					t.Errorf("content part %q", c.Type)
				}
				noExtra(t, "output text", text.JSON.ExtraFields)
			}
		case "function_call":
			c := it.AsFunctionCall()
			noExtra(t, "function call", c.JSON.ExtraFields)
			if c.CallID == "" || c.Name == "" || c.Status != "incomplete" && !json.Valid([]byte(c.Arguments)) {
				t.Errorf("function call %+v", c)
			}
		case "reasoning":
			rs := it.AsReasoning()
			noExtra(t, "reasoning", rs.JSON.ExtraFields)
			if len(rs.Summary) == 0 && rs.EncryptedContent == "" {
				t.Errorf("reasoning item %s carries nothing", rs.ID)
			}
		default:
			t.Errorf("item type %q", it.Type)
		}
	}
}

// wantItemStatus is the status OpenAI gives the i-th output item of r:
// the last one of an incomplete response was cut, and is incomplete too.
func wantItemStatus(r *responses.Response, i int) string {
	if r.Status == "incomplete" && i == len(r.Output)-1 {
		return "incomplete"
	}
	return "completed"
}

func noExtra(t *testing.T, what string, extra map[string]respjson.Field) {
	t.Helper()
	for k := range extra {
		t.Errorf("%s has a member the SDK does not know: %q", what, k)
	}
}

func TestGoldenStreamsParseWithSDK(t *testing.T) {
	paths, _ := filepath.Glob("testdata/responses_to_*/stream_*.sse")
	if len(paths) == 0 {
		t.Fatal("no stream goldens")
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) { checkStream(t, goldentest.Read(t, p)) })
	}
}

// checkStream checks a Responses event stream with the SDK's types and its
// accumulator, and returns the response of its last event.
func checkStream(t *testing.T, b []byte) *responses.Response {
	t.Helper()
	var acc responses.ResponseAccumulator
	var last responses.ResponseStreamEventUnion
	var done []string // the status of each item in its output_item.done
	seq, failed := int64(0), false
	for len(b) > 0 {
		n := sse.Next(b)
		if n == 0 {
			t.Fatalf("unterminated event %q", b)
		}
		ev := b[:n]
		b = b[n:]
		data, _, ok := sse.Data(ev)
		if !ok {
			continue
		}
		name, _ := sse.Field(ev, "event")
		var e responses.ResponseStreamEventUnion
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if e.Type != string(name) || e.SequenceNumber != seq {
			t.Fatalf("event %q has type %q and sequence number %d, want %d", name, e.Type, e.SequenceNumber, seq)
		}
		seq++
		last = e
		if e.Type == "response.output_item.done" {
			done = append(done, e.Item.Status)
		}
		if e.Type == "error" {
			failed = true // the accumulator reports it as its error: it is done
			continue
		}
		var se responses.ResponsesServerEventUnion
		if err := json.Unmarshal(data, &se); err != nil {
			t.Fatal(err)
		}
		if err := acc.AddEvent(se); err != nil && !failed {
			t.Fatalf("the SDK's accumulator refuses %s: %v", data, err)
		}
	}
	r := last.Response
	if failed {
		if last.Type != "response.failed" || r.Status != "failed" || r.Error.Message == "" {
			t.Fatalf("an error event, then %q with status %q", last.Type, r.Status)
		}
		checkResponse(t, &r)
		return &r
	}
	switch last.Type {
	case "response.completed", "response.incomplete":
	default:
		t.Fatalf("the stream ends with %q", last.Type)
	}
	checkResponse(t, &r)
	rebuilt, err := acc.ReconstructedResponse()
	if err != nil {
		t.Fatal(err)
	}
	if len(rebuilt.Output) != len(r.Output) {
		t.Fatalf("the accumulator has %d items, the last event %d", len(rebuilt.Output), len(r.Output))
	}
	for i, status := range done {
		if status != r.Output[i].Status {
			t.Errorf("item %d is %q in its output_item.done, %q in %s", i, status, r.Output[i].Status, last.Type)
		}
	}
	snap := acc.Snapshot()
	for i, it := range snap.Output {
		if want := r.Output[i]; it.ItemID != want.ID || it.Type != want.Type {
			t.Errorf("item %d: accumulated %s %s, final %s %s", i, it.ItemID, it.Type, want.ID, want.Type)
		}
	}
	return &r
}
