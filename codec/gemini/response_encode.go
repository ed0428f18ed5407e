package gemini

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

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
