package fuzz

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// Black-box fuzz targets for the OpenAI translation side: the decoders never
// panic; what they accept, the encoders turn into valid JSON (or valid SSE);
// and decode → encode is stable after one round: encoding what the decoder
// reads of the encoder's output gives that output back.

// openaiTranslateInfo is the StreamInfo of the encoders under fuzz.
var openaiTranslateInfo = codec.StreamInfo{ID: "chatcmpl-fuzz", Model: "public-model", Created: 1700000000, IncludeUsage: true}

func FuzzOpenAITranslateRequest(f *testing.F) {
	seedFiles(f, "../codec/openai/testdata/translate/request/*.in.json", "../codec/testdata/wire/openai/chat_request_*.json",
		"../codec/openai/testdata/*.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		var r codec.Request
		if err := openai.DecodeRequest(body, &r); err != nil {
			if err.Status != 400 {
				t.Fatalf("DecodeRequest(%q): status %d, want 400", body, err.Status)
			}
			return
		}
		// What DecodeRequest accepts is strict JSON, as ChatRequest.Parse
		// (the pass-through's check) wants it.
		if !json.Valid(body) || !rawjson.ValidStrings(body) {
			t.Fatalf("DecodeRequest accepted a body that is not strict JSON: %q", body)
		}
		out, _, err := openai.AppendRequest(nil, &r)
		if err != nil {
			if err.Status != 400 {
				t.Fatalf("AppendRequest of a decoded request: %v\n%q", err, body)
			}
			return // nothing OpenAI can take is left (thinking only)
		}
		if !json.Valid(out) {
			t.Fatalf("AppendRequest wrote invalid JSON: %s\nfrom %q", out, body)
		}
		var r2 codec.Request
		if err := openai.DecodeRequest(out, &r2); err != nil {
			t.Fatalf("DecodeRequest of AppendRequest's output: %v\n%s\nfrom %q", err, out, body)
		}
		again, _, err := openai.AppendRequest(nil, &r2)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("decode → encode is not stable (%v):\n%s\n%s\nfrom %q", err, out, again, body)
		}
	})
}

func FuzzOpenAITranslateResponse(f *testing.F) {
	seedFiles(f, "../codec/openai/testdata/translate/response/*.in.json", "../codec/testdata/wire/openai/chat_response_*.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		var r codec.Response
		if openai.DecodeResponse(body, &r) != nil {
			return
		}
		out := openai.AppendResponse(nil, &r, openaiTranslateInfo)
		if !json.Valid(out) {
			t.Fatalf("AppendResponse wrote invalid JSON: %s\nfrom %q", out, body)
		}
		var r2 codec.Response
		if err := openai.DecodeResponse(out, &r2); err != nil {
			t.Fatalf("DecodeResponse of AppendResponse's output: %v\n%s", err, out)
		}
		if again := openai.AppendResponse(nil, &r2, openaiTranslateInfo); !bytes.Equal(again, out) {
			t.Fatalf("decode → encode is not stable:\n%s\n%s\nfrom %q", out, again, body)
		}
	})
}

// decodeOpenAIStream frames an SSE transcript and decodes it; the events'
// strings are copied, since they may point into the decoder's buffers.
func decodeOpenAIStream(b []byte) ([]codec.Event, error) {
	var d openai.StreamDecoder
	var events []codec.Event
	for len(b) > 0 {
		n := sse.Next(b)
		if n == 0 {
			n = len(b) // the end of the body ends the last event
		}
		ev := b[:n]
		b = b[n:]
		if _, ok := sse.Field(ev, "data"); !ok {
			continue
		}
		name, _ := sse.Field(ev, "event")
		from := len(events)
		var err error
		events, err = d.Decode(events, name, sse.AppendData(nil, ev))
		for i := range events[from:] {
			e := &events[from+i]
			e.ID, e.Model, e.Name = strings.Clone(e.ID), strings.Clone(e.Model), strings.Clone(e.Name)
			e.Text, e.Arguments = strings.Clone(e.Text), strings.Clone(e.Arguments)
			e.Signature, e.Data = strings.Clone(e.Signature), strings.Clone(e.Data)
		}
		if err != nil {
			return events, err
		}
	}
	return d.End(events), nil
}

func encodeOpenAIStream(events []codec.Event) []byte {
	var e openai.StreamEncoder
	e.Reset(openaiTranslateInfo)
	var out []byte
	for i := range events {
		out = e.Encode(out, &events[i])
	}
	return e.End(out)
}

func FuzzOpenAITranslateStream(f *testing.F) {
	seedFiles(f, "../codec/openai/testdata/translate/stream/*.sse", "../codec/testdata/wire/openai/*.sse")
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 64<<10 {
			return
		}
		events, err := decodeOpenAIStream(in)
		if err != nil {
			return
		}
		out := encodeOpenAIStream(events)
		testutil.CheckOpenAISSE(t, out)
		again, err := decodeOpenAIStream(out)
		if err != nil {
			t.Fatalf("decoding the encoder's output: %v\n%s", err, out)
		}
		if out2 := encodeOpenAIStream(again); !bytes.Equal(out2, out) {
			t.Fatalf("decode → encode is not stable:\n%s\n%s\nfrom %q", out, out2, in)
		}
	})
}

// FuzzOpenAIParsedRequest checks ChatRequest.DecodeRequest, which trusts
// the string check of the Parse before it, against DecodeRequest, which
// makes its own: on every body Parse accepts they decode the same request
// or the same error; a body Parse did not check (another slice, a failed
// Parse) is checked in full.
func FuzzOpenAIParsedRequest(f *testing.F) {
	seedFiles(f, "../codec/openai/testdata/translate/request/*.in.json", "../codec/testdata/wire/openai/chat_request_*.json",
		"../codec/openai/testdata/*.json")
	f.Add([]byte("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"tab\there\"}]}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		var want codec.Request
		wantErr := openai.DecodeRequest(body, &want)
		var cr openai.ChatRequest
		parsed := cr.Parse(body) == nil
		var got codec.Request
		gotErr := cr.DecodeRequest(body, &got)
		if !parsed && gotErr == nil && !rawjson.ValidStrings(body) {
			t.Fatalf("DecodeRequest after a failed Parse skipped the string check: %q", body)
		}
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && *gotErr != *wantErr {
			t.Fatalf("ChatRequest.DecodeRequest(%q) = %v, DecodeRequest %v (parsed %v)", body, gotErr, wantErr, parsed)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("ChatRequest.DecodeRequest(%q) decodes\n%+v\nDecodeRequest\n%+v", body, got, want)
		}
		// Another slice with the same bytes is not the one Parse checked.
		other := append([]byte(nil), body...)
		if err := cr.DecodeRequest(other, &got); (err == nil) != (wantErr == nil) {
			t.Fatalf("ChatRequest.DecodeRequest of a copy of %q = %v, DecodeRequest %v", body, err, wantErr)
		}
	})
}
