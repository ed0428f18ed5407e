package gemini_test

import (
	"bytes"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
)

// repeatedKeyChunks are stream chunks whose usageMetadata and
// modelVersion are repeated, spelled with escapes, or nested where they
// do not count, with the usage a client's JSON parser reads from them
// (the last occurrence of a key, decoded, whole).
var repeatedKeyChunks = []struct {
	data string
	want codec.Usage
}{
	{chunk(`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2},"usageMetadata":{"promptTokenCount":7},"modelVersion":"up1"`),
		codec.Usage{Input: 7}},
	{chunk(`"modelVersion":"up1","us\u0061geMetadata":{"promptTokenCount":5,"candidatesTokenCount":3},"m\u006fdelVersion":"up2"`),
		codec.Usage{Input: 5, Output: 3}},
	{chunk(`"usageMetadata":{"promptTokenCount":"x","promptTokenCount":4,"candidatesTokenCount":true,"candidatesTokenCount":6},"modelVersion":"up1"`),
		codec.Usage{Input: 4, Output: 6}},
	{chunk(`"usageMetadata":{"promptTokenCount":5},"x":{"usageMetadata":{"promptTokenCount":99},"modelVersion":"n"},"modelVersion":"up\u0031"`),
		codec.Usage{Input: 5}},
	{chunk(`"usageMetadata":{"promptTokenCount":5},"usageMetadata":null,"modelVersion":"up1"`), codec.Usage{}},
	// Keys the SDKs do not read (genai looks the members up by their
	// camelCase names) are not read, nor renamed.
	{chunk(`"usageMetadata":{"promptTokenCount":100,"prompt_token_count":5,"candidates_token_count":9},"modelVersion":"up1"`),
		codec.Usage{Input: 100}},
	{chunk(`"usage_metadata":{"promptTokenCount":5},"model_version":"snake","usageMetadata":{"promptTokenCount":3},"modelVersion":"up1"`),
		codec.Usage{Input: 3}},
	{chunk(`"modelVersion":"up1","usage_metadata":{"promptTokenCount":5}`), codec.Usage{}},
	// A null count is none, as the SDKs read it, not a usage thrown away.
	{chunk(`"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":null},"modelVersion":"up1"`), codec.Usage{Input: 100}},
	{chunk(`"usageMetadata":{"promptTokenCount":7,"promptTokenCount":null,"thoughtsTokenCount":null},"modelVersion":"up1"`), codec.Usage{}},
}

func chunk(members string) string {
	return `{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP","index":0}],` + members + `}`
}

// TestStreamAsClientsRead: the translating decoder and the relay read the
// usage a client reads, and the relay renames every top-level
// modelVersion, the one a client reads and any before it.
func TestStreamAsClientsRead(t *testing.T) {
	for _, c := range repeatedKeyChunks {
		d := gemini.Dialect.NewStreamDecoder()
		evs, err := d.Decode(nil, nil, []byte(c.data))
		evs = d.End(evs)
		var u codec.Usage
		for _, e := range evs {
			if e.Kind == codec.EventUsage {
				u = e.Usage
			}
		}
		if err != nil || u != c.want {
			t.Errorf("Decode(%s): usage %+v, %v; want %+v", c.data, u, err, c.want)
		}

		r := codec.Relay{Model: "pub", Dec: gemini.Dialect.NewStreamDecoder()}
		ev := []byte("data: " + c.data + "\n\n")
		out, err := gemini.Dialect.RelayEvent(nil, ev, ev[6:len(ev)-2], &r)
		if err != nil || r.Usage != c.want || bytes.Contains(out, []byte(`"up`)) || !bytes.Contains(out, []byte(`"n"`)) && bytes.Contains(ev, []byte(`"n"`)) {
			t.Errorf("RelayEvent(%s) = %s, usage %+v, %v; want %+v", c.data, out, r.Usage, err, c.want)
		}
	}
}

// TestReadRelayedAsClientsRead: a whole answer's modelVersion and
// usageMetadata are the last of each, keys decoded.
func TestReadRelayedAsClientsRead(t *testing.T) {
	body := chunk(`"usageMetadata":{"promptTokenCount":1},"modelVersion":"up1","us\u0061geMetadata":{"promptTokenCount":4,"candidatesTokenCount":5},"m\u006fdelVersion":"up2"`)
	r, ok := gemini.Dialect.ReadRelayed([]byte(body))
	if !ok || !r.HasUsage || r.Usage != (codec.Usage{Input: 4, Output: 5}) || body[r.ModelStart:r.ModelEnd] != "up2" {
		t.Errorf("ReadRelayed(%s) = %+v, %v", body, r, ok)
	}
}
