package gemini

import (
	"bytes"
	"encoding/base64"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// redactedPrefix marks a thoughtSignature that carries Anthropic redacted
// thinking to a Gemini client: base64 of "rosetta.redact:" (15 bytes, so the
// concatenation with the base64 data is itself base64, which SDKs that
// decode thoughtSignature as bytes keep intact). Gemini has no redacted
// thinking; the client returns the part unchanged and DecodeRequest turns it
// back into PartRedactedThinking.
const redactedPrefix = "cm9zZXR0YS5yZWRhY3Q6"

// rawSigPrefix marks a thoughtSignature for a Gemini client that is not
// standard padded base64 (a signature minted by another provider, which is
// opaque text): the value sent is the base64 of "rosetta.rawsig:" (15 bytes)
// followed by the signature, so that it is valid base64, which Gemini's
// bytes field requires and which the SDKs decode (genai rejects a whole
// response otherwise). Parsing a part turns it back (unwrapSignature).
const rawSigPrefix = "cm9zZXR0YS5yYXdzaWc6"

// clientSignature returns sig (tagged with its origin when it has one, see
// codec.TagSignature) as a Gemini client can read it: unchanged
// when it is standard base64 (and not itself marked), else wrapped
// (rawSigPrefix). Only the wrapping allocates.
func clientSignature(sig string) string {
	if sig == "" || codec.IsStdBase64(sig) && !strings.HasPrefix(sig, rawSigPrefix) {
		return sig
	}
	return rawSigPrefix + base64.StdEncoding.EncodeToString(rawjson.UnsafeBytes(sig))
}

// gatewayMark is how every value the gateway wraps for a Gemini client
// (redactedPrefix, rawSigPrefix) starts in JSON: base64 of "rosetta.".
var gatewayMark = []byte(`"cm9zZXR0YS5`)

// HasGatewayMarks reports whether a request body may hold a value the
// gateway wrapped for a Gemini client: another provider's signature or
// redacted thinking, which Gemini itself would refuse, so the request must
// be translated, not relayed (codec.HasSignatureTags).
func HasGatewayMarks(body []byte) bool { return bytes.Contains(body, gatewayMark) }

// unwrapSignature reverses clientSignature.
func unwrapSignature(sig string) string {
	rest, ok := strings.CutPrefix(sig, rawSigPrefix)
	if !ok {
		return sig
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return sig
	}
	return string(b)
}

// skipSignature is the value Gemini documents for function calls whose
// thought signature is unknown (history from another model): it skips the
// signature check that Gemini 3 makes on the first call of a turn.
const skipSignature = "skip_thought_signature_validator"
