package anthropic_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/anthropic"
)

// TestToolID: the signature rides in the id in codec/gemini's format
// (gsig<k><n>_<payload>_<id>) and comes back out exactly.
func TestToolID(t *testing.T) {
	f := func(id, sig, want string) {
		t.Helper()
		got := anthropic.EncodeToolID(id, sig)
		if got != want {
			t.Errorf("EncodeToolID(%q, %q) = %q, want %q", id, sig, got, want)
		}
		if gotID, gotSig := anthropic.DecodeToolID(got); gotID != id || gotSig != sig {
			t.Errorf("DecodeToolID(%q) = %q, %q", got, gotID, gotSig)
		}
	}
	f("toolu_01A", "", "toolu_01A")
	f("call_7", "CiQBjz1rX2+/Ab9XZA==", "gsigb18_CiQBjz1rX2-_Ab9XZA_call_7")
	f("gcall_c1_0", "EvUDCvIDAb4+9vs=", "gsigb15_EvUDCvIDAb4-9vs_gcall_c1_0")
	f("x", "abcd", "gsigb4_abcd_x")
	f("x", "not base64!", "gsigr15_bm90IGJhc2U2NCE_x")
	f("x", "abc", "gsigr4_YWJj_x") // not padded base64: kept byte for byte
	f("", "c2ln", "gsigb4_c2ln_")
	f("id_with_gsig", "c2ln", "gsigb4_c2ln_id_with_gsig")

	// An id that carries the same signature is not wrapped again.
	if got := anthropic.EncodeToolID("gsigb4_abcd_x", "abcd"); got != "gsigb4_abcd_x" {
		t.Errorf("re-encoded: %q", got)
	}
	// Ids that only look like encoded ones stay as they are.
	g := func(s string) {
		t.Helper()
		if id, sig := anthropic.DecodeToolID(s); id != s || sig != "" {
			t.Errorf("DecodeToolID(%q) = %q, %q", s, id, sig)
		}
	}
	g("gsig")
	g("gsigb")
	g("gsigb4_abc")
	g("gsigb4_abcde")
	g("gsigx4_abcd_x")
	g("gsigb5_abcde_x") // 5 characters of base64 cannot be
	g("gsigb4_ab+d_x")
	g("gsigr4_!!!!_x")
	g("gsigb99999999999_x")
	g("toolu_01A")
}
