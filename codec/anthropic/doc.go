// Package anthropic is the Anthropic Messages dialect (POST /v1/messages):
// requests, responses, stream events, errors, token counting and model lists,
// decoded into and encoded from the canonical model of package codec.
//
// Decoders keep strings pointing into the input (no copies): a decoded value
// is valid only as long as its input buffer is, and the buffer must not
// change meanwhile. Encoders append to a caller's buffer and are
// deterministic. See README.md for the field-by-field mapping.
package anthropic
