package testutil

import "github.com/rosetta-gateway/rosetta/codec"

// EncodeStream encodes events for a client with enc, reset with info, and
// frames the stream with f (nil for the encoder's own SSE).
func EncodeStream(enc codec.StreamEncoder, info codec.StreamInfo, events []codec.Event, f codec.Framing) []byte {
	enc.Reset(info)
	var out []byte
	for i := range events {
		out = enc.Encode(out, &events[i])
	}
	out = enc.End(out)
	if f == nil {
		return out
	}
	framed, n := codec.Reframe(nil, out, f, 0)
	return f.End(framed, n)
}
