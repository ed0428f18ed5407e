package gemini

import (
	"bytes"
	"encoding/base64"
	"hash/fnv"
	"strconv"
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

// DecodeResponse reads a whole generateContent response into resp, which it
// resets first. Strings in resp point into body. Only the first candidate is
// read. A prompt blocked by safety filters (no candidates, a
// promptFeedback.blockReason) is not an error: it gives a content-filter
// stop with no parts. A body holding an error object returns it as a
// *codec.Error.
func DecodeResponse(body []byte, resp *codec.Response) error {
	resp.Reset()
	p := parser{b: body}
	if p.peek() != '{' {
		return errNotObject
	}
	sd := strDecoder{capHint: len(body)}
	var c wireChunk
	var w wirePart
	var callBuf [8]int
	calls := callBuf[:0] // indices of the calls in resp.Parts, named once the responseId is read
	ok := readChunk(&p, &c, &w, &sd, func(w *wirePart) {
		if fc := &w.FunctionCall; fc.Name != "" {
			calls = append(calls, len(resp.Parts))
			resp.Parts = append(resp.Parts, codec.Part{Kind: codec.PartToolCall, ID: fc.ID, Name: fc.Name,
				Arguments: arguments(fc.Args), Signature: w.ThoughtSignature})
			return
		}
		if part, ok := decodeDataPart(w); ok {
			resp.Parts = append(resp.Parts, part)
		}
	})
	if !ok {
		resp.Reset()
		return errSyntax
	}
	if c.Error != nil {
		e := statusError(0, c.Error)
		resp.Reset()
		return &e
	}
	scope := responseScope(c.ResponseID, body)
	for n, i := range calls {
		part := &resp.Parts[i]
		part.ID = callID(part.ID, scope, n, part.Signature)
	}
	resp.ID, resp.Model = c.ResponseID, c.ModelVersion
	resp.Usage = decodeUsage(&c.Usage)
	switch {
	case c.Candidate:
		resp.Stop = stopReason(c.FinishReason, len(calls) > 0)
	case c.BlockReason != "":
		resp.Stop = codec.StopContentFilter
	}
	return nil
}

// arguments returns a function call's args as canonical arguments text.
func arguments(args []byte) string {
	if len(args) == 0 {
		return "{}"
	}
	return rawString(args)
}

// responseScope is what makes the synthesised call ids of one response
// unique: its responseId, or, when there is none, a hash of its first bytes
// (deterministic for the same response).
func responseScope(responseID string, body []byte) string {
	if responseID != "" {
		return responseID
	}
	h := fnv.New64a()
	h.Write(body)
	return "x" + strconv.FormatUint(h.Sum64(), 36)
}

// finishReasons maps every documented FinishReason. STOP is a natural end,
// a stop sequence or function calls alike (stopReason tells calls apart).
var finishReasons = map[string]codec.StopReason{
	"STOP":                      codec.StopEnd,
	"MAX_TOKENS":                codec.StopMaxTokens,
	"CONTINUATION":              codec.StopMaxTokens, // the per-request limit; the continuation token is not carried
	"SAFETY":                    codec.StopContentFilter,
	"RECITATION":                codec.StopContentFilter,
	"LANGUAGE":                  codec.StopContentFilter,
	"BLOCKLIST":                 codec.StopContentFilter,
	"PROHIBITED_CONTENT":        codec.StopContentFilter,
	"SPII":                      codec.StopContentFilter,
	"IMAGE_SAFETY":              codec.StopContentFilter,
	"IMAGE_PROHIBITED_CONTENT":  codec.StopContentFilter,
	"IMAGE_RECITATION":          codec.StopContentFilter,
	"OTHER":                     codec.StopError,
	"MALFORMED_FUNCTION_CALL":   codec.StopError,
	"UNEXPECTED_TOOL_CALL":      codec.StopError,
	"TOO_MANY_TOOL_CALLS":       codec.StopError,
	"NO_IMAGE":                  codec.StopError,
	"IMAGE_OTHER":               codec.StopError,
	"FINISH_REASON_UNSPECIFIED": codec.StopUnknown,
}

// stopReason maps a finishReason; a STOP that ends function calls is a tool
// use stop.
func stopReason(finish string, calls bool) codec.StopReason {
	s := finishReasons[finish] // unknown values are StopUnknown
	switch {
	case s == codec.StopEnd && calls:
		return codec.StopToolUse
	}
	return s
}

// finishNames is the finishReason of each canonical stop reason.
var finishNames = [...]string{
	codec.StopUnknown:       "FINISH_REASON_UNSPECIFIED",
	codec.StopEnd:           "STOP",
	codec.StopMaxTokens:     "MAX_TOKENS",
	codec.StopSequence:      "STOP",
	codec.StopToolUse:       "STOP",
	codec.StopContentFilter: "SAFETY",
	codec.StopPause:         "STOP",
	codec.StopError:         "OTHER",
}

func finishName(s codec.StopReason) string {
	if int(s) < len(finishNames) {
		return finishNames[s]
	}
	return "OTHER"
}

// decodeUsage maps usageMetadata. Output counts the thoughts as well
// (candidatesTokenCount excludes them), and Input the tool-use prompt
// tokens, so that Input + Output is Gemini's totalTokenCount.
func decodeUsage(u *wireUsage) codec.Usage {
	return codec.Usage{
		Input:       u.PromptTokenCount + u.ToolUsePromptTokenCount,
		Output:      u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CachedInput: u.CachedContentTokenCount,
		Reasoning:   u.ThoughtsTokenCount,
	}
}

// appendUsage appends a usageMetadata object; zero counts other than the
// prompt and total are left out, as Gemini does.
func appendUsage(dst []byte, u codec.Usage) []byte {
	candidates := max(u.Output-u.Reasoning, 0)
	dst = append(dst, `{"promptTokenCount":`...)
	dst = strconv.AppendInt(dst, int64(u.Input), 10)
	if candidates > 0 {
		dst = append(dst, `,"candidatesTokenCount":`...)
		dst = strconv.AppendInt(dst, int64(candidates), 10)
	}
	dst = append(dst, `,"totalTokenCount":`...)
	dst = strconv.AppendInt(dst, int64(u.Total()), 10)
	if u.CachedInput > 0 {
		dst = append(dst, `,"cachedContentTokenCount":`...)
		dst = strconv.AppendInt(dst, int64(u.CachedInput), 10)
	}
	if u.Reasoning > 0 {
		dst = append(dst, `,"thoughtsTokenCount":`...)
		dst = strconv.AppendInt(dst, int64(u.Reasoning), 10)
	}
	return append(dst, '}')
}

// AppendResponse appends resp as a generateContent response for a Gemini
// client: one candidate with the parts, the finish reason and the usage.
// modelVersion is info.Model when set (the public name), else resp.Model;
// responseId is resp.ID, else info.ID. Tool calls show their canonical id as
// functionCall.id, which Gemini clients echo in functionResponse.id.
func AppendResponse(dst []byte, resp *codec.Response, info codec.StreamInfo) []byte {
	dst = append(dst, `{"candidates":[{`...)
	if len(resp.Parts) > 0 || resp.Stop != codec.StopContentFilter {
		dst = append(dst, `"content":{`...)
		if len(resp.Parts) > 0 {
			dst = append(dst, `"parts":[`...)
			n := 0
			for i := range resp.Parts {
				var ok bool
				if dst, ok = appendResponsePart(dst, &resp.Parts[i], n > 0, info.Origin); ok {
					n++
				}
			}
			dst = append(dst, "],"...)
		}
		dst = append(dst, `"role":"model"},`...)
	}
	dst = append(dst, `"finishReason":"`...)
	dst = append(dst, finishName(resp.Stop)...)
	dst = append(dst, `","index":0}],"usageMetadata":`...)
	dst = appendUsage(dst, resp.Usage)
	return appendTrailer(dst, pick(info.Model, resp.Model), pick(resp.ID, info.ID))
}

// appendTrailer appends the modelVersion and responseId members and closes
// the response object.
func appendTrailer(dst []byte, model, id string) []byte {
	dst = append(dst, `,"modelVersion":`...)
	dst = rawjson.AppendString(dst, model)
	dst = append(dst, `,"responseId":`...)
	dst = rawjson.AppendString(dst, id)
	return append(dst, '}')
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// appendResponsePart appends one part of an answer, preceded by a comma when
// comma is set, its signature tagged when a provider of style origin minted
// it (clientSignature). ok is false when the part has no Gemini form (tool
// results and empty text), and nothing is appended.
func appendResponsePart(dst []byte, p *codec.Part, comma bool, origin string) ([]byte, bool) {
	if p.Kind == codec.PartToolResult || (p.Kind == codec.PartText || p.Kind == codec.PartThinking) && p.Text == "" && p.Signature == "" {
		return dst, false
	}
	if comma {
		dst = append(dst, ',')
	}
	sig := clientSignature(codec.TagSignature(p.Signature, origin, codec.DialectGemini))
	switch p.Kind {
	case codec.PartText:
		dst = appendTextPart(dst, p.Text, false, sig)
	case codec.PartThinking:
		dst = appendTextPart(dst, p.Text, true, sig)
	case codec.PartRedactedThinking:
		dst = appendRedacted(dst, p.Data)
	case codec.PartToolCall:
		dst = appendCallPart(dst, p.ID, p.Name, p.Arguments, sig)
	default:
		dst = appendMediaPart(dst, p)
	}
	return dst, true
}

// appendTextPart appends a text or thought part.
func appendTextPart(dst []byte, text string, thought bool, sig string) []byte {
	dst = append(dst, `{"text":`...)
	dst = rawjson.AppendString(dst, text)
	if thought {
		dst = append(dst, `,"thought":true`...)
	}
	return appendSignature(dst, sig)
}

// appendRedacted appends redacted thinking for a Gemini client: an empty
// thought whose signature is the marked data.
func appendRedacted(dst []byte, data string) []byte {
	dst = append(dst, `{"thought":true,"thoughtSignature":"`...)
	dst = append(dst, redactedPrefix...)
	dst = rawjson.AppendEscaped(dst, data)
	return append(dst, `"}`...)
}

// appendSignature appends the thoughtSignature member (when sig is set) and
// closes the part.
func appendSignature(dst []byte, sig string) []byte {
	if sig != "" {
		dst = append(dst, `,"thoughtSignature":`...)
		dst = rawjson.AppendString(dst, sig)
	}
	return append(dst, '}')
}

// appendCallPart appends a functionCall part; id is omitted when empty, and
// args must be a JSON object or empty.
func appendCallPart(dst []byte, id, name, args, sig string) []byte {
	dst = append(dst, `{"functionCall":{`...)
	if id != "" {
		dst = append(dst, `"id":`...)
		dst = rawjson.AppendString(dst, id)
		dst = append(dst, ',')
	}
	dst = append(dst, `"name":`...)
	dst = rawjson.AppendString(dst, name)
	dst = append(dst, `,"args":`...)
	dst = appendArgs(dst, args)
	dst = append(dst, '}')
	return appendSignature(dst, sig)
}

// appendArgs appends call arguments as a JSON object. Arguments that are
// not one (a call cut off by the token limit) become {}, since Gemini's args
// is an object and the output must stay valid JSON.
func appendArgs(dst []byte, args string) []byte {
	if !isJSONObject(args) {
		return append(dst, "{}"...)
	}
	return append(dst, args...)
}

// isJSONObject reports whether s is one valid JSON object.
func isJSONObject(s string) bool {
	b := trimSpace(rawjson.UnsafeBytes(s))
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	return validObject(b)
}

// appendMediaPart appends an image or document as inlineData (base64) or
// fileData (a URI; data: URLs become inlineData).
func appendMediaPart(dst []byte, p *codec.Part) []byte {
	data, mediaType, uri := p.Data, p.MediaType, p.URL
	if data == "" {
		if mt, d, ok := rawjson.ParseDataURL(uri); ok {
			data, uri = d, ""
			if mediaType == "" {
				mediaType = mt
			}
		}
	}
	if data != "" || uri == "" {
		if mediaType == "" {
			mediaType = sniffMediaType(data)
		}
		dst = append(dst, `{"inlineData":{"mimeType":`...)
		dst = rawjson.AppendString(dst, mediaType)
		dst = append(dst, `,"data":`...)
		dst = rawjson.AppendString(dst, data)
	} else {
		dst = append(dst, `{"fileData":{`...)
		if mediaType == "" {
			mediaType = mediaTypeOfURL(uri)
		}
		if mediaType != "" {
			dst = append(dst, `"mimeType":`...)
			dst = rawjson.AppendString(dst, mediaType)
			dst = append(dst, ',')
		}
		dst = append(dst, `"fileUri":`...)
		dst = rawjson.AppendString(dst, uri)
	}
	dst = append(dst, '}')
	return appendSignature(dst, p.Signature)
}
