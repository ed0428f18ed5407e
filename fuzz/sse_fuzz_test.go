package fuzz

import (
	"bytes"
	"slices"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// FuzzSSEFraming checks the SSE framing a relay runs: Next never panics and
// always agrees with a plain reference framer, so the events of a stream do
// not depend on where its reads end; every event ends with its (first) blank
// line; Data, AppendData and Field agree with each other.
func FuzzSSEFraming(f *testing.F) {
	chunk := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}`
	for _, s := range []string{
		"data: " + chunk + "\n\ndata: " + chunk + "\n\ndata: [DONE]\n\n",
		": OPENROUTER PROCESSING\n\ndata: " + chunk + "\n\n",
		"event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
		"data: " + chunk + "\r\n\r\ndata: [DONE]\r\n\r\n",
		"data: " + chunk + "\r\rdata: [DONE]\r\r",
		"id: 1\nretry: 3000\ndata: a\ndata: b\ndata\n\n",
		"data: a\n\n\ndata: b\n\n\r\n",
		"\n\ndata: x\r\n",
		"data:x\n\r\ndata: y\r\n\n",
	} {
		f.Add([]byte(s), uint16(len(s)/3), uint16(len(s)/2))
	}

	f.Fuzz(func(t *testing.T, b []byte, cut1, cut2 uint16) {
		if len(b) > 64<<10 {
			return
		}
		events, rest := frame(t, b)
		i, j := int(cut1)%(len(b)+1), int(cut2)%(len(b)+1)
		i, j = min(i, j), max(i, j)
		if e2, r2 := frame(t, b[:i], b[i:j], b[j:]); !equal(events, e2) || !bytes.Equal(rest, r2) {
			t.Fatalf("split at %d and %d: events %q, rest %q; unsplit: %q, %q", i, j, e2, r2, events, rest)
		}
		if len(b) <= 512 {
			var byByte [][]byte
			for k := range b {
				byByte = append(byByte, b[k:k+1])
			}
			if e2, r2 := frame(t, byByte...); !equal(events, e2) || !bytes.Equal(rest, r2) {
				t.Fatalf("byte by byte: events %q, rest %q; unsplit: %q, %q", e2, r2, events, rest)
			}
		}

		for _, ev := range events {
			if !endsWithBlankLine(ev) {
				t.Fatalf("event %q does not end with a blank line", ev)
			}
			data, multi, ok := sse.Data(ev)
			joined := sse.AppendData(nil, ev)
			switch {
			case !ok && (len(data) != 0 || multi || len(joined) != 0):
				t.Fatalf("Data(%q) = %q, %v, false but AppendData = %q", ev, data, multi, joined)
			case ok && !multi && !bytes.Equal(joined, data):
				t.Fatalf("Data(%q) = %q, AppendData = %q", ev, data, joined)
			case ok && multi && !bytes.HasPrefix(joined, append(data, '\n')):
				t.Fatalf("Data(%q) = %q (multi), AppendData = %q", ev, data, joined)
			}
			for _, name := range []string{"event", "id", "retry", "data"} {
				if v, ok := sse.Field(ev, name); ok && bytes.ContainsAny(v, "\r\n") {
					t.Fatalf("Field(%q, %q) = %q spans lines", ev, name, v)
				}
			}
		}
	})
}

// frame runs the relay's loop over the chunks: append each to a buffer and
// take every complete event off its front. It checks each answer of Next
// against refNext and returns the events and what is left.
func frame(t *testing.T, chunks ...[]byte) (events [][]byte, rest []byte) {
	t.Helper()
	var buf []byte
	for _, c := range chunks {
		buf = append(buf, c...)
		for {
			n := sse.Next(buf)
			if want := refNext(buf); n != want {
				t.Fatalf("Next(%q) = %d, want %d", buf, n, want)
			}
			if n == 0 {
				break
			}
			events = append(events, buf[:n:n])
			buf = buf[n:]
		}
	}
	return events, buf
}

// refNext is the specification of sse.Next, written for clarity: lines end in
// "\r\n", "\n" or "\r"; the first empty line ends the event; a "\r" that ends
// the buffer leaves the event undecided, since a "\n" may follow.
func refNext(b []byte) int {
	lineStart := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' && b[i] != '\r' {
			continue
		}
		end := i + 1
		if b[i] == '\r' {
			if end == len(b) {
				return 0
			}
			if b[end] == '\n' {
				end++
			}
		}
		if i == lineStart {
			return end
		}
		lineStart = end
		i = end - 1
	}
	return 0
}

// endsWithBlankLine reports whether ev ends with an empty line: its last line
// ending follows either another line ending or nothing.
func endsWithBlankLine(ev []byte) bool {
	switch {
	case bytes.HasSuffix(ev, []byte("\r\n")):
		ev = ev[:len(ev)-2]
	case bytes.HasSuffix(ev, []byte("\n")), bytes.HasSuffix(ev, []byte("\r")):
		ev = ev[:len(ev)-1]
	default:
		return false
	}
	return len(ev) == 0 || ev[len(ev)-1] == '\n' || ev[len(ev)-1] == '\r'
}

func equal(a, b [][]byte) bool { return slices.EqualFunc(a, b, bytes.Equal) }
