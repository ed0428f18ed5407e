package sse_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/sse"
)

func TestNextEvent(t *testing.T) {
	f := func(in string) {
		t.Helper()
		checkNextEvent(t, []byte(in))
	}
	// The one-look shapes.
	f("data: x\n\n")
	f("event: content_block_delta\ndata: {\"index\":0}\n\n")
	f("event: a\ndata: b\n\nevent: c\ndata: d\n\n")
	f("event:a\ndata:b\n\n")
	f("event:  a\ndata:  b\n\n")
	f("event\ndata\n\n")
	f("event: \ndata: \n\n")
	// Near them: other fields, other orders, other endings, incomplete.
	f("data: b\nevent: a\n\n")
	f("events: a\ndata: b\n\n")
	f("event: a\ndatum: b\n\n")
	f("id: 1\ndata: b\n\n")
	f("event: a\nevent: b\ndata: c\n\n")
	f("event: a\ndata: b\ndata: c\n\n")
	f("event: a\ndata: b\n\n\n")
	f("event: a\ndata: b\n")
	f("event: a\ndata: b")
	f("event: a\n")
	f("event: a\n\n")
	f("event: a\rdata: b\n\n")
	f("event: a\ndata: b\r\n\r\n")
	f("event: a\r\ndata: b\r\n\r\n")
	f("event: a\ndata: b\r\n\n")
	f("event: a\ndata: b\n\r")
	f("event: a\n\ndata: b\n\n")
	f("\nevent: a\ndata: b\n\n")
	f(": ping\ndata: b\n\n")
	f("data: x\n")
	f("")
	// Gemini's "\r\n" endings, and near them.
	f("data: {\"candidates\":[]}\r\n\r\ndata: y\r\n\r\n")
	f("event: a\r\n\r\n")
	f(": ping\r\n\r\n")
	f("data: a\rb\r\n\r\n")
	f("data: x\r\n\r")
	f("\r\n\r\n")
}

// checkNextEvent holds NextEvent to Next, Data and Field, and Next to
// NextMixed.
func checkNextEvent(t *testing.T, in []byte) {
	t.Helper()
	n, name, data, multi, ok := sse.NextEvent(in)
	var wantName, wantData []byte
	var wantMulti, wantOK bool
	wantN := sse.Next(in)
	checkNextLikeMixed(t, in, wantN)
	if wantN > 0 {
		wantData, wantMulti, wantOK = sse.Data(in[:wantN])
		wantName, _ = sse.Field(in[:wantN], "event")
	}
	if n != wantN || string(name) != string(wantName) || string(data) != string(wantData) || multi != wantMulti || ok != wantOK {
		t.Errorf("NextEvent(%q) = %d, %q, %q, %v, %v; Next, Field and Data: %d, %q, %q, %v, %v",
			in, n, name, data, multi, ok, wantN, wantName, wantData, wantMulti, wantOK)
	}
}

// FuzzNextEvent holds NextEvent to Next, Data and Field, and Next to
// NextMixed, whatever the bytes.
func FuzzNextEvent(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "event: a\ndata: b\n\n", "event: a\ndata: b\ndata: c\n\n",
		"event:a\r\ndata: b\n\n", "event\ndata\n\n", "id: 1\ndata: x\n\n", "\n\n", "data: x\r\n\r\n", "event: a\r\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkNextEvent)
}
