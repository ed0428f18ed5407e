// Package responses is OpenAI's Responses API (POST /v1/responses) as a
// client style over the canonical model: a request's input items,
// instructions, function tools and settings decoded into a codec.Request,
// and a canonical response or stream encoded as a Response object or as
// its typed event stream. It is a client style only: no channel speaks it
// through this package (an OpenAI channel that serves Responses natively
// is relayed as it is by the proxy).
//
// What the gateway keeps between turns (previous_response_id, store) is
// read into codec.Session; InputItems, OutputItems and Prepend turn an
// exchange into the items the proxy stores and put stored items back in
// front of a later request's input. README.md maps every field.
package responses
