package gemini

import (
	"hash/fnv"
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
)

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
