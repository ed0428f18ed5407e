// Package sse frames server-sent events (the WHATWG "text/event-stream"
// format) without copying: it finds where an event ends in a buffer and where
// its data lies, so a relay can pass events on byte for byte.
//
// Lines end in "\n", "\r\n" or "\r"; an empty line ends an event. A buffer
// that ends in a lone "\r" is not yet complete, because the next read may
// bring the "\n" of the same line ending: this keeps the framing independent
// of read boundaries.
package sse

import "bytes"

var (
	strLF    = []byte("\n\n")
	strDone  = []byte("[DONE]")
	strSpace = []byte(" ")
)

// Next returns the length of the first complete event in b, its terminating
// blank line included, or 0 when b holds no complete event yet.
func Next(b []byte) int {
	// The common cases: one line and the blank line, with "\n" or "\r\n"
	// endings, found by the first line end; then any event with "\n"
	// endings only. Only the candidate event is searched for "\r", never
	// the rest of the buffer.
	e := lineEnd(b)
	if n, _ := oneLine(b, e); n > 0 {
		return n
	}
	return nextFrom(b, e)
}

// nextFrom is Next past its one-line case, given e, the offset of b's
// first line end (lineEnd; below 0: none). An event with a "\r" before
// its first "\n" is nextMixed's alone, so no search for that "\n" is made.
func nextFrom(b []byte, e int) int {
	if e >= 0 && b[e] == '\r' {
		return nextMixed(b)
	}
	return next(b, e)
}

// next is nextFrom when b has no "\r" before its first "\n", at nl
// (below 0: none).
func next(b []byte, nl int) int {
	if nl == 0 {
		return 1 // an empty line: an event with no fields
	}
	i := -1
	if nl > 0 {
		if i = bytes.Index(b[nl:], strLF); i >= 0 {
			i += nl // a blank line's "\n\n" starts at a "\n"
		}
	}
	if i >= 0 && bytes.IndexByte(b[:i], '\r') < 0 {
		return i + 2
	}
	if i < 0 && bytes.IndexByte(b, '\r') < 0 {
		return 0
	}
	return nextMixed(b)
}

// NextData is Next, and Data of the event it finds (nothing when it finds
// none). The usual event of a stream, one data line and the blank line, is
// framed and read in one look for its line end: the relay looks at each
// event once, not once to frame it and again for its data.
func NextData(b []byte) (n int, data []byte, multi, ok bool) {
	e := lineEnd(b)
	if n, line := oneLine(b, e); n > 0 {
		data, ok = dataValue(b[:line])
		return n, data, false, ok
	}
	if n = nextFrom(b, e); n > 0 {
		data, multi, ok = Data(b[:n])
	}
	return n, data, multi, ok
}

// oneLine returns the length of the event b starts with when it is one
// line that is not blank and the blank line, both ending in "\n" or both
// in "\r\n" (Gemini's), and the length of that line; 0, 0 otherwise. e
// is the offset of b's first line end (lineEnd; below 0: none).
func oneLine(b []byte, e int) (n, line int) {
	switch {
	case e <= 0:
	case b[e] == '\n':
		if e+1 < len(b) && b[e+1] == '\n' {
			return e + 2, e
		}
	case e+3 < len(b) && b[e+1] == '\n' && b[e+2] == '\r' && b[e+3] == '\n':
		return e + 4, e
	}
	return 0, 0
}

// nextMixed handles any mix of "\n", "\r\n" and "\r" line endings,
// from one line end to the next: with lineEnd when its vector search is
// on (it stops at the first of either byte: one look at each byte), else
// with nextMixedScan.
func nextMixed(b []byte) int {
	if !vectorLineEnd {
		return nextMixedScan(b)
	}
	lineStart := 0
	for {
		e := lineEnd(b[lineStart:])
		if e < 0 {
			return 0
		}
		i := lineStart + e
		end := pastLineEnd(b, i)
		if end < 0 || i == lineStart {
			return max(end, 0)
		}
		lineStart = end
	}
}

// nextMixedScan is nextMixed by IndexByte: it looks for each "\n" once,
// so that a long run of "\r" lines stays linear (lineEnd without its
// vector search looks for the "\n" first, through the rest of b).
func nextMixedScan(b []byte) int {
	lineStart, nl := 0, -1 // nl: the first "\n" at or after lineStart, or len(b)
	for {
		if nl < lineStart {
			if nl = bytes.IndexByte(b[lineStart:], '\n'); nl < 0 {
				nl = len(b)
			} else {
				nl += lineStart
			}
		}
		i := nl
		if j := bytes.IndexByte(b[lineStart:nl], '\r'); j >= 0 {
			i = lineStart + j
		}
		if i == len(b) {
			return 0
		}
		end := pastLineEnd(b, i)
		if end < 0 || i == lineStart {
			return max(end, 0)
		}
		lineStart = end
	}
}

// pastLineEnd returns the offset past the line ending at b[i], a "\n" or
// a "\r", or -1 for a "\r" at b's end: "\r" or "\r\n", undecidable
// until the next byte.
func pastLineEnd(b []byte, i int) int {
	end := i + 1
	if b[i] == '\r' {
		if end == len(b) {
			return -1
		}
		if b[end] == '\n' {
			end++
		}
	}
	return end
}

// Data returns the value of the first "data" field of the event ev, without
// copying, and whether the event has more than one data line (a caller that
// needs the joined value then uses AppendData). ok is false when the event
// has no data field (a comment, or only "event:" or "id:" lines).
func Data(ev []byte) (data []byte, multi, ok bool) {
	for len(ev) > 0 {
		line, rest := cutLine(ev)
		ev = rest
		if v, isData := dataValue(line); isData {
			if !ok {
				data, ok = v, true
				continue
			}
			return data, true, true
		}
	}
	return data, false, ok
}

// AppendData appends the data of the event ev to dst: the values of all its
// data lines joined with "\n", as the SSE standard defines.
func AppendData(dst, ev []byte) []byte {
	first := true
	for len(ev) > 0 {
		line, rest := cutLine(ev)
		ev = rest
		if v, isData := dataValue(line); isData {
			if !first {
				dst = append(dst, '\n')
			}
			dst = append(dst, v...)
			first = false
		}
	}
	return dst
}

// Field returns the value of the first field named name ("event", "id",
// "retry") of the event ev.
func Field(ev []byte, name string) ([]byte, bool) {
	for len(ev) > 0 {
		line, rest := cutLine(ev)
		ev = rest
		if string(line) == name { // a field with no colon has an empty value
			return line[len(line):], true
		}
		if len(line) > len(name) && string(line[:len(name)]) == name && line[len(name)] == ':' {
			return bytes.TrimPrefix(line[len(name)+1:], strSpace), true
		}
	}
	return nil, false
}

// IsDone reports whether data is the "[DONE]" sentinel that ends OpenAI streams.
func IsDone(data []byte) bool { return bytes.Equal(data, strDone) }

// AppendEvent appends an event with an optional name and one data line.
func AppendEvent(dst []byte, event string, data []byte) []byte {
	if event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// cutLine splits off the first line of b, without its line ending.
func cutLine(b []byte) (line, rest []byte) {
	// IndexByte is vectorised, IndexAny is not: look for "\n" first, then
	// for a "\r" only within that line.
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		i = j
	}
	if i == len(b) {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	if b[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
		rest = rest[1:]
	}
	return line, rest
}

// dataValue returns the value of a "data" line: after the colon, one leading
// space removed. A bare "data" line has an empty value.
func dataValue(line []byte) ([]byte, bool) {
	if len(line) < 4 || string(line[:4]) != "data" {
		return nil, false
	}
	return afterName(line[4:])
}
