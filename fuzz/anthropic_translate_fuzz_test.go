package fuzz

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// Black-box fuzz targets of the Anthropic Messages dialect (codec/anthropic):
// its decoders never panic, what they accept encodes to valid JSON (or a
// valid Anthropic event stream), and decode→encode→decode is stable.

func anthropicOptions(v2026 bool) anthropic.Options {
	if v2026 {
		return anthropic.Options{Version: anthropic.Version20261021}
	}
	return anthropic.Options{Version: anthropic.Version20230601}
}

// FuzzAnthropicRequest: DecodeRequest never panics; an accepted request
// encodes to a valid JSON body that decodes again and encodes to the same
// bytes, under either API version.
func FuzzAnthropicRequest(f *testing.F) {
	seedFiles(f, "../codec/anthropic/testdata/request/*.in.json",
		"../codec/anthropic/testdata/messages_2kb.json",
		"../codec/testdata/wire/anthropic/messages_request_tools.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		for _, v2026 := range []bool{false, true} {
			o := anthropicOptions(v2026)
			var r codec.Request
			if err := anthropic.DecodeRequestOptions(body, &r, o); err != nil {
				if err.Status != 400 || err.Message == "" {
					t.Fatalf("rejection without a 400 and a message: %+v", err)
				}
				continue
			}
			out, _, err := anthropic.AppendRequestOptions(nil, &r, o)
			if err != nil {
				continue // nothing left to send (every message empty)
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON from %q:\n%s", body, out)
			}
			var r2 codec.Request
			if err := anthropic.DecodeRequestOptions(out, &r2, o); err != nil {
				t.Fatalf("the encoded request does not decode: %v\n%s", err, out)
			}
			out2, _, err := anthropic.AppendRequestOptions(nil, &r2, o)
			if err != nil || !bytes.Equal(out, out2) {
				t.Fatalf("encode(decode(out)) is not out (%v):\n%s\n%s", err, out2, out)
			}
			cnt, _, err := anthropic.AppendCountTokensRequest(nil, &r, o)
			if err != nil || !json.Valid(cnt) {
				t.Fatalf("count_tokens body (%v): %s", err, cnt)
			}
		}
	})
}

// FuzzAnthropicResponse: DecodeResponse never panics; an accepted response
// encodes to valid JSON that decodes again and encodes to the same bytes.
func FuzzAnthropicResponse(f *testing.F) {
	seedFiles(f, "../codec/anthropic/testdata/response/*.in.json",
		"../codec/testdata/wire/anthropic/messages_response_thinking_tool.json")
	info := codec.StreamInfo{ID: "msg_fuzz", Model: "claude-public"}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		var r codec.Response
		if anthropic.DecodeResponse(body, &r) != nil {
			return
		}
		out := anthropic.AppendResponse(nil, &r, info)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON from %q:\n%s", body, out)
		}
		var r2 codec.Response
		if err := anthropic.DecodeResponse(out, &r2); err != nil {
			t.Fatalf("the encoded response does not decode: %v\n%s", err, out)
		}
		if out2 := anthropic.AppendResponse(nil, &r2, info); !bytes.Equal(out, out2) {
			t.Fatalf("encode(decode(out)) is not out:\n%s\n%s", out2, out)
		}
	})
}

// anthropicTranscode feeds a transcript, split in two at split, through an
// SSE framer, the stream decoder and the stream encoder, as the proxy's
// relay does; a decoding error ends the stream with an error event.
func anthropicTranscode(in []byte, split int) []byte {
	var d anthropic.StreamDecoder
	var enc anthropic.StreamEncoder
	enc.Reset(codec.StreamInfo{ID: "msg_fuzz", Model: "claude-public", InputTokens: 5})
	var buf, out []byte
	var events []codec.Event
	failed := false
	feed := func(chunk []byte, final bool) {
		buf = append(buf, chunk...)
		for !failed {
			n := sse.Next(buf)
			if n == 0 {
				if !final || len(buf) == 0 {
					return
				}
				n = len(buf)
			}
			ev := buf[:n]
			buf = buf[n:]
			if _, _, ok := sse.Data(ev); !ok {
				continue
			}
			name, _ := sse.Field(ev, "event")
			var err error
			events, err = d.Decode(events[:0], name, sse.AppendData(nil, ev))
			for i := range events {
				out = enc.Encode(out, &events[i])
			}
			if err != nil {
				failed = true
				out = enc.Encode(out, &codec.Event{Kind: codec.EventError,
					Err: &codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "bad upstream event"}})
			}
		}
	}
	split = min(split, len(in))
	feed(in[:split], false)
	feed(in[split:], true)
	if !failed {
		events = d.End(events[:0])
		for i := range events {
			out = enc.Encode(out, &events[i])
		}
	}
	return enc.End(out)
}

// FuzzAnthropicStream: the stream decoder never panics; whatever the
// upstream sends, the client gets a well-formed stream, the same whatever
// the read boundaries, and transcoding that stream again gives it back.
func FuzzAnthropicStream(f *testing.F) {
	paths, _ := filepath.Glob("../codec/anthropic/testdata/stream/*.sse")
	wire, _ := filepath.Glob("../codec/testdata/wire/anthropic/*.sse")
	for _, p := range append(paths, wire...) {
		if strings.HasSuffix(p, ".out.sse") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(len(b)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		if len(in) > 64<<10 {
			return
		}
		out := anthropicTranscode(in, len(in))
		if p := testutil.AnthropicStreamError(out); p != "" {
			t.Fatalf("%s\nin:\n%q\nout:\n%s", p, in, out)
		}
		if got := anthropicTranscode(in, int(split)); !bytes.Equal(got, out) {
			t.Fatalf("split at %d changes the output:\n%s\nwant\n%s", split, got, out)
		}
		if again := anthropicTranscode(out, len(out)); !bytes.Equal(again, out) {
			t.Fatalf("transcoding the output again changes it:\n%s\nwant\n%s", again, out)
		}
	})
}

// FuzzAnthropicToolID: a signature folded into a tool_use id comes back out
// exactly, and the id stays within Anthropic's alphabet when the original id
// does.
func FuzzAnthropicToolID(f *testing.F) {
	f.Add("toolu_01A", "EvUDCvIDAb4+9vs=")
	f.Add("call_7", "not base64!")
	f.Add("gcall_c1_0", "")
	f.Add("", "c2ln")
	f.Fuzz(func(t *testing.T, id, sig string) {
		if _, s := anthropic.DecodeToolID(id); s != "" || sig == "" {
			return // an id that already carries a signature stays as it is
		}
		enc := anthropic.EncodeToolID(id, sig)
		gotID, gotSig := anthropic.DecodeToolID(enc)
		if gotID != id || gotSig != sig {
			t.Fatalf("EncodeToolID(%q, %q) = %q decodes to %q, %q", id, sig, enc, gotID, gotSig)
		}
		if anthropic.EncodeToolID(enc, sig) != enc {
			t.Fatalf("re-encoding %q wrapped it again", enc)
		}
		plain := func(s string) bool {
			for i := range len(s) {
				c := s[i]
				if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
					return false
				}
			}
			return true
		}
		if plain(id) && !plain(enc) {
			t.Fatalf("EncodeToolID(%q, %q) = %q leaves [A-Za-z0-9_-]", id, sig, enc)
		}
	})
}

// FuzzAnthropicError: DecodeError never panics, and every error encodes to
// valid JSON of Anthropic's shape.
func FuzzAnthropicError(f *testing.F) {
	seedFiles(f, "../codec/testdata/wire/anthropic/error_*.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		e, ok := anthropic.DecodeError(529, body)
		if !ok {
			e = codec.Error{Status: 500, Message: string(body)}
		}
		out := anthropic.AppendError(nil, &e)
		var w struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(out, &w) != nil || w.Type != "error" || w.Error.Type == "" {
			t.Fatalf("AppendError gave %s", out)
		}
		ev := anthropic.AppendStreamError(nil, &e)
		if !bytes.HasPrefix(ev, []byte("event: error\ndata: ")) || !bytes.HasSuffix(ev, []byte("\n\n")) {
			t.Fatalf("AppendStreamError gave %q", ev)
		}
	})
}
