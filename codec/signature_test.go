package codec_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

func TestSignatureTags(t *testing.T) {
	for _, tc := range []struct{ sig, origin, client, want string }{
		{"abc", "gemini", "anthropic", "rosetta:gemini:abc"},
		{"abc", "anthropic", "anthropic", "abc"},
		{"abc", "", "openai", "abc"},
		{"", "gemini", "openai", ""},
	} {
		got := codec.TagSignature(tc.sig, tc.origin, tc.client)
		if got != tc.want {
			t.Errorf("TagSignature(%q, %q, %q) = %q, want %q", tc.sig, tc.origin, tc.client, got, tc.want)
		}
		wantOrigin := tc.client // untagged: the client's own style
		if tc.origin != "" && tc.sig != "" {
			wantOrigin = tc.origin
		}
		if sig, origin := codec.SplitSignature(got, tc.client); sig != tc.sig || origin != wantOrigin {
			t.Errorf("SplitSignature(%q, %q) = %q, %q; want %q, %q", got, tc.client, sig, origin, tc.sig, wantOrigin)
		}
	}
	for s, want := range map[string][2]string{
		"rosetta:gemini:Cr4=": {"Cr4=", "gemini"},
		"rosetta:":            {"rosetta:", "anthropic"}, // not a tag: the client's own
		"rosetta:gemini:":     {"rosetta:gemini:", "anthropic"},
		"EqQB":                {"EqQB", "anthropic"},
	} {
		if sig, origin := codec.SplitSignature(s, "anthropic"); sig != want[0] || origin != want[1] {
			t.Errorf("SplitSignature(%q) = %q, %q; want %q, %q", s, sig, origin, want[0], want[1])
		}
	}
	for body, want := range map[string]bool{
		`{"signature":"rosetta:gemini:Cr4="}`:         true,
		`{"signature":"rosetta:openai:x"}`:            true,
		`{"text":"rosetta: a name"}`:                  false,
		`{"text":"rosetta:geminis"}`:                  false,
		`{"a":"rosetta:x","b":"rosetta:anthropic:s"}`: true,
		`{}`: false,
	} {
		if got := codec.HasSignatureTags([]byte(body)); got != want {
			t.Errorf("HasSignatureTags(%s) = %v", body, got)
		}
	}
	p := codec.Part{Signature: "s", SigOrigin: "gemini"}
	if p.SignedFor("gemini") != "s" || p.SignedFor("anthropic") != "" {
		t.Error("SignedFor keeps a signature for another provider, or drops one for its own")
	}
	if q := (codec.Part{Signature: "s"}); q.SignedFor("anthropic") != "s" {
		t.Error("SignedFor drops a signature of unknown origin")
	}
}
