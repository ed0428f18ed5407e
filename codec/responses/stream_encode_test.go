package responses_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	rc "github.com/rosetta-gateway/rosetta/codec/responses"
	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// longAnswer is a text answer of n deltas, the i-th numbered so that a
// delta lost, repeated or moved shows, and pad bytes longer: mostly plain
// (Plain marked), some with a quote, a backslash, a newline and multi-byte
// UTF-8 to escape.
func longAnswer(n, pad int) (events []codec.Event, text string) {
	var all strings.Builder
	events = append(events, codec.Event{Kind: codec.EventStart}, codec.Event{Kind: codec.EventBlockStart, Block: codec.PartText})
	for i := range n {
		d := " delta " + strconv.Itoa(i) + " of a long answer, long enough to spill its text buffer; " + strings.Repeat("-", pad)
		plain := i%7 != 0
		if !plain {
			d += "\"quoted\" \\ é\n"
		}
		all.WriteString(d)
		events = append(events, codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: d, Plain: plain})
	}
	events = append(events, codec.Event{Kind: codec.EventBlockStop}, codec.Event{Kind: codec.EventFinish, Stop: codec.StopEnd})
	return events, all.String()
}

// An answer far past the text buffer an encoder keeps (200 KB in 3,000
// deltas, kept in spilled buffers of three sizes) comes out whole in
// output_text.done, content_part.done, output_item.done and
// response.completed, and in Response; so does it again on the same
// encoder, whose spilled buffers went back to their pool, and a short
// answer after it, in the encoder's own buffer again.
func TestLongAnswerWhole(t *testing.T) {
	long, longText := longAnswer(3000, 0)
	if len(longText) < 200_000 {
		t.Fatalf("the long answer is %d bytes", len(longText))
	}
	short, shortText := longAnswer(3, 0)
	var e rc.StreamEncoder
	info := codec.StreamInfo{ID: "resp_1", Model: "m", Created: 1795252445}
	// The SDK reads a long answer, and its accumulator rebuilds it (fewer,
	// longer deltas: it joins the text anew at each).
	sdkLong, _ := longAnswer(100, 1000)
	checkStream(t, testutil.EncodeStream(&e, info, sdkLong, nil))
	for _, c := range []struct {
		events []codec.Event
		text   string
	}{{long, longText}, {long, longText}, {short, shortText}, {long, longText}} {
		checkDoneTexts(t, testutil.EncodeStream(&e, info, c.events, nil), c.text)
		if got := e.Response().Parts[0].Text; got != c.text {
			t.Fatalf("Response holds %d bytes of the answer's %d", len(got), len(c.text))
		}
	}
}

// checkDoneTexts checks that the events closing the stream's one text
// item, and the completed response, give text whole.
func checkDoneTexts(t *testing.T, out []byte, text string) {
	t.Helper()
	seen := 0
	for len(out) > 0 {
		n := sse.Next(out)
		data, _, _ := sse.Data(out[:n])
		name, _ := sse.Field(out[:n], "event")
		if out = out[n:]; bytes.HasSuffix(name, []byte(".delta")) {
			continue // most events, the only ones not read
		}
		var ev struct {
			Type     string
			Text     string
			Part     struct{ Text string }
			Item     struct{ Content []struct{ Text string } }
			Response struct {
				Output []struct{ Content []struct{ Text string } }
			}
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatal(err)
		}
		got := ""
		switch ev.Type {
		case "response.output_text.done":
			got = ev.Text
		case "response.content_part.done":
			got = ev.Part.Text
		case "response.output_item.done":
			if len(ev.Item.Content) == 1 {
				got = ev.Item.Content[0].Text
			}
		case "response.completed":
			if out := ev.Response.Output; len(out) == 1 && len(out[0].Content) == 1 {
				got = out[0].Content[0].Text
			}
		default:
			continue
		}
		if seen++; got != text {
			t.Fatalf("%s holds %d bytes of the answer's %d", ev.Type, len(got), len(text))
		}
	}
	if seen != 4 {
		t.Fatalf("%d closing events", seen)
	}
}
