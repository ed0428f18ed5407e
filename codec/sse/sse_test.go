package sse_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
)

func TestNext(t *testing.T) {
	// f checks that the first event of in is want ("" when in holds no complete event).
	f := func(in, want string) {
		t.Helper()
		if n := sse.Next([]byte(in)); in[:n] != want {
			t.Errorf("Next(%q) = %d (%q), want %q", in, n, in[:n], want)
		}
		checkNextData(t, []byte(in))
	}
	// "\n" line endings: the fast path.
	f(``, ``)
	f("data: x", ``)
	f("data: x\n", ``)
	f("data: x\n\n", "data: x\n\n")
	f("data: x\n\ndata: y\n\n", "data: x\n\n")
	f("data: a\ndata: b\n\ndata: c\n\n", "data: a\ndata: b\n\n")
	f("event: ping\ndata: {}\n\n", "event: ping\ndata: {}\n\n")
	f(": ping\n\ndata: x\n\n", ": ping\n\n")
	f("data\n\n", "data\n\n")

	// "\r\n" and bare "\r".
	f("data: x\r\n", ``)
	f("data: x\r\n\r", ``) // the next byte may be the "\n" of this blank line
	f("data: x\r\n\r\n", "data: x\r\n\r\n")
	f("data: x\r\n\r\ndata: y\r\n\r\n", "data: x\r\n\r\n")
	f("data: x\r\r", ``) // likewise
	f("data: x\r\rdata: y\r\r", "data: x\r\r")
	f("event: a\rdata: b\r\r\r", "event: a\rdata: b\r\r")
	f("data: x\r", ``)

	// Mixed endings.
	f("data: x\n\r\n", "data: x\n\r\n")
	f("data: x\r\n\n", "data: x\r\n\n")
	f("data: x\n\rdata: y", "data: x\n\r")
	f("data: x\r\n\n\r\n", "data: x\r\n\n")

	// A blank line before any field is an (empty) event of its own, whatever the
	// other line endings in the buffer: the fast path must agree with the mixed one.
	f("\r\ndata: x\r\n\r\n", "\r\n")
	f("\rdata: x\r\r", "\r")
	f("\ndata: x\n\n", "\n")
	f("\n\n", "\n")

	// NextData's one look: a data line, or another line, and the blank line.
	f("data:x\n\n", "data:x\n\n")
	f("data:  x\n\n", "data:  x\n\n")
	f("datum: x\n\n", "datum: x\n\n")
	f("event: a\n\n", "event: a\n\n")
	f("data: a\rb\n\n", "data: a\rb\n\n")
	f("data: [DONE]\n\ndata: x", "data: [DONE]\n\n")

	// Its look at a line with "\r\n" endings, as Gemini sends them.
	f("data: x\r\n\r\nda", "data: x\r\n\r\n")
	f("x\r\n\r\n", "x\r\n\r\n")
	f("\r\n\r\n", "\r\n")
	f("data: a\rb\r\n\r\n", "data: a\rb\r\n\r\n")
	f("data: x\r\n\r\r\n", "data: x\r\n\r")
	f("data: x\r\n\n", "data: x\r\n\n")
	f("data: x\r\ndata: y\r\n\r\n", "data: x\r\ndata: y\r\n\r\n")
}

// checkNextData holds NextData to Next and Data, and Next to NextMixed.
func checkNextData(t *testing.T, in []byte) {
	t.Helper()
	n, data, multi, ok := sse.NextData(in)
	var wantData []byte
	var wantMulti, wantOK bool
	wantN := sse.Next(in)
	checkNextLikeMixed(t, in, wantN)
	if wantN > 0 {
		wantData, wantMulti, wantOK = sse.Data(in[:wantN])
	}
	if n != wantN || string(data) != string(wantData) || multi != wantMulti || ok != wantOK {
		t.Errorf("NextData(%q) = %d, %q, %v, %v; Next and Data: %d, %q, %v, %v", in, n, data, multi, ok, wantN, wantData, wantMulti, wantOK)
	}
}

// checkNextLikeMixed fails t when Next(in), n, is not what NextMixed, a
// framer independent of lineEnd, finds.
func checkNextLikeMixed(t *testing.T, in []byte, n int) {
	t.Helper()
	if want := sse.NextMixed(in); n != want {
		t.Fatalf("Next(%q) = %d, NextMixed: %d", in, n, want)
	}
}

// FuzzNextData holds NextData to Next and Data, and Next to NextMixed,
// whatever the bytes.
func FuzzNextData(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "data: a\ndata: b\n\n", ": ping\n\n", "data: x\r\n\r\n", "\n\n", "data: x\n", "data\n\n", "\r\n\r\n", "data: a\rb\r\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkNextData)
}

func TestData(t *testing.T) {
	f := func(ev, want string, wantMulti, wantOK bool) {
		t.Helper()
		data, multi, ok := sse.Data([]byte(ev))
		if string(data) != want || multi != wantMulti || ok != wantOK {
			t.Errorf("Data(%q) = %q, %v, %v; want %q, %v, %v", ev, data, multi, ok, want, wantMulti, wantOK)
		}
	}
	f("data: {\"a\":1}\n\n", `{"a":1}`, false, true)
	f("data:x\n\n", "x", false, true)      // no space
	f("data:  x \n\n", " x ", false, true) // only one leading space is removed
	f("data:\n\n", "", false, true)        // empty value
	f("data: \n\n", "", false, true)       // empty value after the space
	f("data\n\n", "", false, true)         // no colon: an empty value
	f("event: message_start\ndata: {}\n\n", "{}", false, true)
	f("id: 1\r\ndata: x\r\n\r\n", "x", false, true)
	f("data: x\r\r", "x", false, true)
	f("data: x", "x", false, true)             // the last event of a stream may lack its blank line
	f("data: a\ndata: b\n\n", "a", true, true) // the first line and a hint to join
	f("data: a\r\ndata\r\n\r\n", "a", true, true)

	// No data field.
	f(": ping\n\n", "", false, false)
	f(": data: x\n\n", "", false, false)
	f("event: ping\n\n", "", false, false)
	f("Data: x\n\n", "", false, false)
	f("data : x\n\n", "", false, false) // the field is named "data "
	f("datum: x\n\n", "", false, false)
	f("dataX: x\n\n", "", false, false)
	f("", "", false, false)
}

func TestAppendData(t *testing.T) {
	f := func(ev, want string) {
		t.Helper()
		got := sse.AppendData([]byte("prefix|"), []byte(ev))
		if string(got) != "prefix|"+want {
			t.Errorf("AppendData(%q) = %q, want %q", ev, got, "prefix|"+want)
		}
	}
	f("data: x\n\n", "x")
	f("data: a\ndata: b\n\n", "a\nb")
	f("data: a\r\ndata:b\r\ndata\r\n\r\n", "a\nb\n")
	f("data: a\rdata: b\r\r", "a\nb")
	f(": c\ndata: x\nid: 1\ndata: y\n\n", "x\ny")
	f("data:\ndata:\n\n", "\n")
	f(": ping\n\n", "")
	f("event: ping\n\n", "")
}

func TestField(t *testing.T) {
	f := func(ev, name, want string, wantOK bool) {
		t.Helper()
		v, ok := sse.Field([]byte(ev), name)
		if string(v) != want || ok != wantOK {
			t.Errorf("Field(%q, %q) = %q, %v; want %q, %v", ev, name, v, ok, want, wantOK)
		}
	}
	f("event: message_start\ndata: {}\n\n", "event", "message_start", true)
	f("event:ping\ndata: {}\n\n", "event", "ping", true)
	f("data: {}\r\nevent: delta\r\n\r\n", "event", "delta", true)
	f("event: a\revent: b\r\r", "event", "a", true)
	f("id: 7\ndata: x\n\n", "id", "7", true)
	f("retry: 3000\n\n", "retry", "3000", true)
	f("event:\n\n", "event", "", true)
	f("event\ndata: x\n\n", "event", "", true) // a field name alone has an empty value
	f("data: x\n\n", "data", "x", true)

	f("data: x\n\n", "event", "", false)
	f(": event: x\n\n", "event", "", false)
	f("events: x\n\n", "event", "", false)
	f("Event: x\n\n", "event", "", false)
	f("ident: x\n\n", "id", "", false)
}

func TestIsDone(t *testing.T) {
	for in, want := range map[string]bool{"[DONE]": true, "[DONE] ": false, "[done]": false, "": false, `"[DONE]"`: false} {
		if got := sse.IsDone([]byte(in)); got != want {
			t.Errorf("IsDone(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestAppendEvent(t *testing.T) {
	f := func(event, data, want string) {
		t.Helper()
		got := sse.AppendEvent([]byte("x"), event, []byte(data))
		if string(got) != "x"+want {
			t.Fatalf("AppendEvent(%q, %q) = %q, want %q", event, data, got, "x"+want)
		}
		ev := got[1:]
		if n := sse.Next(ev); n != len(ev) {
			t.Errorf("Next(%q) = %d, want the whole event", ev, n)
		}
		if d, multi, ok := sse.Data(ev); string(d) != data || multi || !ok {
			t.Errorf("Data(%q) = %q, %v, %v", ev, d, multi, ok)
		}
		if name, ok := sse.Field(ev, "event"); string(name) != event || ok != (event != "") {
			t.Errorf("Field(%q, event) = %q, %v", ev, name, ok)
		}
	}
	f("", `{"a":1}`, "data: {\"a\":1}\n\n")
	f("message_start", `{"type":"message_start"}`, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
	f("", "", "data: \n\n")
	f("", " x", "data:  x\n\n")
}

// frame feeds chunks to the loop a relay runs (append what was read, then
// pass on every complete event) and returns the events in order and what is
// left at the end of the stream.
func frame(t *testing.T, chunks ...[]byte) (events []string, rest string) {
	t.Helper()
	var buf []byte
	for _, c := range chunks {
		buf = append(buf, c...)
		for {
			n := sse.Next(buf)
			if n == 0 {
				break
			}
			if n > len(buf) {
				t.Fatalf("Next(%q) = %d, beyond the buffer", buf, n)
			}
			events = append(events, string(buf[:n]))
			buf = buf[n:]
		}
	}
	return events, string(buf)
}

// splitAt cuts b at the given increasing offsets.
func splitAt(b []byte, offsets ...int) [][]byte {
	var chunks [][]byte
	prev := 0
	for _, o := range offsets {
		chunks = append(chunks, b[prev:o])
		prev = o
	}
	return append(chunks, b[prev:])
}

func TestBoundaryIndependence(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range testStreams {
		t.Run(s.name, func(t *testing.T) {
			b := s.bytes()
			check := func(how string, chunks [][]byte) {
				t.Helper()
				events, rest := frame(t, chunks...)
				if !slices.Equal(events, s.events) || rest != s.rest {
					t.Fatalf("framing %s:\nevents %q\nrest %q\nwant events %q\nrest %q", how, events, rest, s.events, s.rest)
				}
			}
			check("unsplit", [][]byte{b})
			for i := range len(b) + 1 {
				check(fmt.Sprintf("split at %d", i), splitAt(b, i))
			}
			byByte := make([][]byte, len(b))
			for i := range b {
				byByte[i] = b[i : i+1]
			}
			check("byte by byte", byByte)
			for range 500 {
				offsets := make([]int, 1+rng.IntN(12))
				for i := range offsets {
					offsets[i] = rng.IntN(len(b) + 1)
				}
				slices.Sort(offsets)
				check(fmt.Sprintf("split at %v", offsets), splitAt(b, offsets...))
			}
		})
	}
}
