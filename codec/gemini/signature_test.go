package gemini_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
)

// TestClientSignatures: a thinking signature given to a Gemini client is
// valid base64 bytes whatever provider minted it (SDKs decode
// thoughtSignature as []byte and fail on anything else), and comes back
// unchanged when the client returns the part.
func TestClientSignatures(t *testing.T) {
	f := func(sig string, asIs bool) {
		t.Helper()
		resp := codec.Response{Parts: []codec.Part{{Kind: codec.PartThinking, Text: "hm", Signature: sig}}, Stop: codec.StopEnd}
		out := gemini.AppendResponse(nil, &resp, codec.StreamInfo{Model: "m"})
		var answer struct {
			Candidates []struct{ Content json.RawMessage }
		}
		if err := json.Unmarshal(out, &answer); err != nil || len(answer.Candidates) != 1 {
			t.Fatalf("%q: answer %s: %v", sig, out, err)
		}
		content := answer.Candidates[0].Content
		var sdk struct {
			Parts []struct{ ThoughtSignature []byte }
		}
		if err := json.Unmarshal(content, &sdk); err != nil {
			t.Fatalf("%q: a Gemini SDK cannot read %s: %v", sig, content, err)
		}
		if got := strings.Contains(string(content), `"thoughtSignature":"`+sig+`"`); got != asIs {
			t.Errorf("%q: sent as it is %v, want %v: %s", sig, got, asIs, content)
		}
		var req codec.Request
		body := `{"contents":[{"role":"user","parts":[{"text":"q"}]},` + string(content) + `]}`
		if e := gemini.DecodeRequest([]byte(body), &req); e != nil {
			t.Fatalf("%q: %v", sig, e)
		}
		if p := req.Messages[1].Parts[0]; p.Kind != codec.PartThinking || p.Signature != sig {
			t.Errorf("%q: back as %v %q", sig, p.Kind, p.Signature)
		}
	}
	f("CikBnKaaKgWmIGus+/8Q", true)                                   // Gemini's own: standard base64
	f("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", false) // unpadded
	f("sig-from-a-compatible-server", false)
	f("cm9zZXR0YS5yYXdzaWc6", false) // the marker alone is not mistaken for a wrapped value
}
