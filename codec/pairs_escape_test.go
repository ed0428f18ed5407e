package codec_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// A text that needs escaping reaches every client style as valid JSON,
// however the OpenAI decoder reads it: "\"\"\xff" unescapes to as many
// bytes as it has (the escapes shorten it, the invalid byte made U+FFFD
// lengthens it), read whole or by the kept shape of the chunk before it;
// and a delta with its content twice, whose second the scanner declines
// and sonic reads.
func TestPairsEscapedTextValid(t *testing.T) {
	const head = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":`
	const tail = `},"finish_reason":null}]}`
	chunk := func(content string) string { return "data: " + head + content + tail + "\n\n" }
	streams := map[string]string{
		"whole":  chunk("\"\\\"\\\"\xff\"") + "data: [DONE]\n\n",
		"shaped": chunk(`"a"`) + chunk("\"\\\"\\\"\xff\"") + "data: [DONE]\n\n",
		"twice":  chunk(`"a"`) + "data: " + `{"choices":[{"index":0,"delta":{"content":"a","content":"\"x"}}]}` + "\n\n" + "data: [DONE]\n\n",
	}
	upstream := styles[0] // OpenAI
	for _, client := range styles {
		for name, in := range streams {
			tc := &goldentest.Transcoder{Dec: upstream.NewStreamDecoder(), Enc: client.NewStreamEncoder(), Info: pair{client, upstream, ""}.info()}
			out := tc.Run(t, []byte(in))
			for b := out; len(b) > 0; {
				n := sse.Next(b)
				if n == 0 {
					t.Fatalf("%s to %s: unterminated event %q", name, client.name(), b)
				}
				if data, _, ok := sse.Data(b[:n]); ok && !sse.IsDone(data) && !json.Valid(data) {
					t.Errorf("%s to %s: invalid JSON %s", name, client.name(), data)
				}
				b = b[n:]
			}
			if !bytes.Contains(out, []byte(`\"`)) {
				t.Errorf("%s to %s: no escaped quote in %s", name, client.name(), out)
			}
		}
	}
}
