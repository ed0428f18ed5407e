// Package openai is the OpenAI wire format: chat completion requests,
// responses, stream chunks, model lists and errors.
//
// The pass-through path never decodes a whole body: it reads the few
// top-level fields it needs with rawjson and splices edits into the original
// bytes.
package openai
