package goldentest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// Framer frames an upstream's SSE bytes as proxy/relay.go does: complete
// events are taken as the bytes arrive, and at the end of the body a last
// event without its blank line still counts. It hands each event with data
// to Handle (the event's bytes, its name and data, both pointing into the
// event or a scratch buffer), which returns false to stop, as the relay
// stops at a decoding error.
type Framer struct {
	Handle func(ev, name, data []byte) bool

	in      []byte // bytes not yet framed
	data    []byte // the joined data of a multi-line event
	stopped bool
}

// Reset readies f for a new stream, keeping its buffers.
func (f *Framer) Reset() { f.in, f.stopped = f.in[:0], false }

// Write takes one read of upstream bytes.
func (f *Framer) Write(p []byte) {
	f.in = append(f.in, p...)
	r := 0
	for !f.stopped {
		n := sse.Next(f.in[r:])
		if n == 0 {
			break
		}
		f.event(f.in[r : r+n])
		r += n
	}
	f.in = f.in[:copy(f.in, f.in[r:])]
}

// End frames what the end of the body leaves.
func (f *Framer) End() {
	if len(f.in) > 0 && !f.stopped {
		f.event(f.in)
	}
}

func (f *Framer) event(ev []byte) {
	name, _ := sse.Field(ev, "event")
	data, multi, ok := sse.Data(ev)
	if !ok {
		return // a comment or keep-alive
	}
	if multi {
		f.data = sse.AppendData(f.data[:0], ev)
		data = f.data
	}
	f.stopped = !f.Handle(ev, name, data)
}

// Transcoder turns an upstream's stream into a client's as the relay does:
// each framed event is decoded into canonical events, which are encoded at
// once; the end of the body brings the decoder's End and the encoder's.
type Transcoder struct {
	Framer
	Dec  codec.StreamDecoder
	Enc  codec.StreamEncoder
	Info codec.StreamInfo
	// Poison overwrites each event's bytes once it is transcoded, as a
	// relay's buffer is overwritten by later reads: nothing may keep
	// pointing into them.
	Poison bool
	// Err is the decoder's error, which ended the stream.
	Err error

	out    []byte
	events []codec.Event
}

// NewTranscoder returns a transcoder from dec to enc, which it resets.
func NewTranscoder(dec codec.StreamDecoder, enc codec.StreamEncoder, info codec.StreamInfo) *Transcoder {
	tc := &Transcoder{Dec: dec, Enc: enc, Info: info}
	tc.Handle = tc.transcode
	tc.Reset()
	return tc
}

// Reset readies tc for a new stream, keeping its buffers.
func (tc *Transcoder) Reset() {
	tc.Framer.Reset()
	tc.Dec.Reset()
	tc.Enc.Reset(tc.Info)
	tc.out, tc.Err = tc.out[:0], nil
}

func (tc *Transcoder) transcode(ev, name, data []byte) bool {
	tc.events, tc.Err = tc.Dec.Decode(tc.events[:0], name, data)
	if tc.Err != nil {
		return false
	}
	tc.encode()
	if tc.Poison {
		fill(ev, 0xff)
		fill(tc.data, 0xff)
	}
	return true
}

func fill(b []byte, c byte) {
	for i := range b {
		b[i] = c
	}
}

func (tc *Transcoder) encode() {
	for i := range tc.events {
		tc.out = tc.Enc.Encode(tc.out, &tc.events[i])
	}
}

// Out returns the client's bytes produced since the last Reset or Discard.
func (tc *Transcoder) Out() []byte { return tc.out }

// Discard drops the client's bytes produced so far, keeping the state.
func (tc *Transcoder) Discard() { tc.out = tc.out[:0] }

// Close ends the upstream body and returns the client's stream, valid
// until the next Reset.
func (tc *Transcoder) Close() []byte {
	tc.End()
	if tc.Err != nil {
		return tc.out
	}
	tc.events = tc.Dec.End(tc.events[:0])
	tc.encode()
	tc.out = tc.Enc.End(tc.out)
	return tc.out
}

// Run transcodes the given reads of a whole stream, failing t on a decoding
// error, and returns a copy of the client's stream.
func (tc *Transcoder) Run(t testing.TB, reads ...[]byte) []byte {
	t.Helper()
	tc.Reset()
	for _, r := range reads {
		tc.Write(r)
	}
	out := tc.Close()
	if tc.Err != nil {
		t.Fatalf("%T: %v", tc.Dec, tc.Err)
	}
	return slices.Clone(out)
}

// Bytewise is b as reads of one byte each.
func Bytewise(b []byte) [][]byte {
	reads := make([][]byte, len(b))
	for i := range b {
		reads[i] = b[i : i+1]
	}
	return reads
}

// EventData returns the data of every event of the streams the patterns
// match, golden outputs (".out." files) left out: a corpus of chunks.
func EventData(t testing.TB, patterns ...string) [][]byte {
	t.Helper()
	var out [][]byte
	n := 0
	for _, pattern := range patterns {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			if strings.Contains(p, ".out.") {
				continue
			}
			n++
			b := Read(t, p)
			for len(b) > 0 {
				k := sse.Next(b)
				if k == 0 {
					k = len(b)
				}
				if data := sse.AppendData(nil, b[:k]); len(data) > 0 {
					out = append(out, data)
				}
				b = b[k:]
			}
		}
	}
	if n == 0 {
		t.Fatalf("no streams match %q", patterns)
	}
	return out
}
