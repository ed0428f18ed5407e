package sse

import "bytes"

// NextEvent is NextData, and the value of the event's "event" field as
// Field(ev, "event") reads it (empty when it has none). A translating
// relay needs both for every event: the two shapes of nearly every event,
// a data line alone (OpenAI, Gemini) and an event line then a data line
// (Anthropic, Responses), both with "\n" endings, are framed and read in
// one look for their line endings, where Next, Data and Field would cut
// the lines three times.
func NextEvent(b []byte) (n int, name, data []byte, multi, ok bool) {
	if i := bytes.IndexByte(b, '\n'); i > 0 && i+1 < len(b) {
		if b[i+1] == '\n' {
			if data, ok = dataValue(b[:i]); ok && bytes.IndexByte(b[:i], '\r') < 0 {
				return i + 2, nil, data, false, true
			}
		} else if j := bytes.IndexByte(b[i+1:], '\n'); j > 0 {
			j += i + 1
			if j+1 < len(b) && b[j+1] == '\n' && bytes.IndexByte(b[:j], '\r') < 0 {
				name, isName := fieldValue(b[:i], "event")
				data, isData := dataValue(b[i+1 : j])
				if isName && isData {
					return j + 2, name, data, false, true
				}
			}
		}
	}
	if n = Next(b); n > 0 {
		data, multi, ok = Data(b[:n])
		name, _ = Field(b[:n], "event")
	}
	return n, name, data, multi, ok
}

// fieldValue returns the value of line when it is the field name: after
// the colon, one leading space removed; a bare name has an empty value.
func fieldValue(line []byte, name string) ([]byte, bool) {
	if len(line) < len(name) || string(line[:len(name)]) != name {
		return nil, false
	}
	rest := line[len(name):]
	if len(rest) == 0 {
		return rest, true
	}
	if rest[0] != ':' {
		return nil, false
	}
	return bytes.TrimPrefix(rest[1:], strSpace), true
}
