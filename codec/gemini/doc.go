// Package gemini is the Gemini API wire format (generateContent and
// streamGenerateContent, v1beta): requests, responses, stream chunks (SSE and
// JSON-array framing), errors (google.rpc.Status), model lists and paths.
//
// The model and the stream flag are not in Gemini's request body but in the
// URL (/v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse):
// ParsePath reads them, AppendPath writes them, and the body codecs leave
// codec.Request's Model and Stream to the caller.
//
// Decoded strings point into the input buffer (see parse.go); README.md
// tells how every field maps to the canonical model.
package gemini
