package sse

// NextEvent is NextData, and the value of the event's "event" field as
// Field(ev, "event") reads it (empty when it has none). A translating
// relay needs both for every event: the two shapes of nearly every event,
// a data line alone (OpenAI; Gemini, with "\r\n" endings) and an event
// line then a data line (Anthropic, Responses, with "\n" endings), are
// framed and read in one look for their line endings, where Next, Data
// and Field would cut the lines three times.
func NextEvent(b []byte) (n int, name, data []byte, multi, ok bool) {
	e := lineEnd(b)
	if k, line := oneLine(b, e); k > 0 {
		if data, ok = dataValue(b[:line]); ok {
			return k, nil, data, false, true
		}
	} else if e > 0 && b[e] == '\n' && e+1 < len(b) && b[e+1] != '\n' && b[e+1] != '\r' {
		// Two lines, "\n" endings: the second's end must be a "\n" too.
		if j := lineEnd(b[e+1:]); j > 0 {
			j += e + 1
			if b[j] == '\n' && j+1 < len(b) && b[j+1] == '\n' {
				name, isName := eventValue(b[:e])
				data, isData := dataValue(b[e+1 : j])
				if isName && isData {
					return j + 2, name, data, false, true
				}
			}
		}
	}
	if n = nextFrom(b, e); n > 0 {
		data, multi, ok = Data(b[:n])
		name, _ = Field(b[:n], "event")
	}
	return n, name, data, multi, ok
}

// eventValue is Field's reading of an "event" line, as dataValue is of
// a "data" line.
func eventValue(line []byte) ([]byte, bool) {
	if len(line) < 5 || string(line[:5]) != "event" {
		return nil, false
	}
	return afterName(line[5:])
}

// afterName returns the value of a field from what follows its name:
// after the colon, one leading space removed; a bare name has an empty
// value.
func afterName(rest []byte) ([]byte, bool) {
	if len(rest) == 0 {
		return rest, true
	}
	if rest[0] != ':' {
		return nil, false
	}
	if len(rest) > 1 && rest[1] == ' ' {
		return rest[2:], true
	}
	return rest[1:], true
}
