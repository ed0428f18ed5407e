package goldentest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// Transcoder runs a codec.Transcoder, the one the proxy's relay uses, over
// the reads of an upstream body: it keeps the bytes not yet consumed as the
// relay does, and the client's bytes produced so far.
type Transcoder struct {
	codec.Transcoder
	Dec     codec.StreamDecoder
	Enc     codec.StreamEncoder
	Info    codec.StreamInfo
	Framing codec.Framing // nil for SSE
	// Poison overwrites each event's bytes once it is transcoded, as a
	// relay's buffer is overwritten by later reads: nothing may keep
	// pointing into them.
	Poison bool

	in  []byte // bytes not yet consumed
	out []byte
}

// NewTranscoder returns a transcoder from dec to enc, which it resets.
func NewTranscoder(dec codec.StreamDecoder, enc codec.StreamEncoder, info codec.StreamInfo) *Transcoder {
	tc := &Transcoder{Dec: dec, Enc: enc, Info: info}
	tc.Reset()
	return tc
}

// Reset readies tc for a new stream, keeping its buffers.
func (tc *Transcoder) Reset() {
	tc.ResetTranslate(tc.Dec, tc.Enc, tc.Info, tc.Framing)
	tc.in, tc.out = tc.in[:0], tc.out[:0]
}

// Write takes one read of upstream bytes. With Poison it transcodes one
// event at a time, overwriting each once done.
func (tc *Transcoder) Write(p []byte) {
	tc.in = append(tc.in, p...)
	r := 0
	for tc.Err() == nil && r < len(tc.in) {
		end := len(tc.in)
		if tc.Poison {
			end = r + sse.Next(tc.in[r:])
		}
		var n int
		tc.out, n = tc.Transcode(tc.out, tc.in[r:end])
		if tc.Poison {
			fill(tc.in[r:r+n], 0xff)
		}
		if r += n; n == 0 {
			break
		}
	}
	tc.in = tc.in[:copy(tc.in, tc.in[r:])]
}

func fill(b []byte, c byte) {
	for i := range b {
		b[i] = c
	}
}

// Out returns the client's bytes produced since the last Reset or Discard.
func (tc *Transcoder) Out() []byte { return tc.out }

// Discard drops the client's bytes produced so far, keeping the state.
func (tc *Transcoder) Discard() { tc.out = tc.out[:0] }

// Close ends the upstream body and returns the client's stream, valid
// until the next Reset.
func (tc *Transcoder) Close() []byte {
	tc.out = tc.End(tc.out, tc.in)
	tc.in = tc.in[:0]
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
	if err := tc.Err(); err != nil {
		t.Fatalf("%T: %v", tc.Dec, err)
	}
	return slices.Clone(out)
}

// Recorder is a stream decoder that hands each event it is given to
// Handle and decodes it into nothing: with NopEncoder, a transcoder that
// only frames.
type Recorder struct{ Handle func(name, data []byte) }

func (r *Recorder) Decode(dst []codec.Event, name, data []byte) ([]codec.Event, error) {
	r.Handle(name, data)
	return dst, nil
}
func (r *Recorder) End(dst []codec.Event) []codec.Event { return dst }
func (r *Recorder) Reset()                              {}

// NopEncoder encodes nothing.
type NopEncoder struct{}

func (NopEncoder) Encode(dst []byte, _ *codec.Event) []byte { return dst }
func (NopEncoder) End(dst []byte) []byte                    { return dst }
func (NopEncoder) Reset(codec.StreamInfo)                   {}

// Events splits an SSE stream into its events, as the transcoder frames
// them: the last one may lack its blank line.
func Events(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := sse.Next(b)
		if n == 0 {
			n = len(b)
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
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
