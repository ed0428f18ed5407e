// Package codec holds the dialect-neutral model of the gateway: what every
// provider style can be decoded into and encoded from. The dialects live in
// sub-packages (codec/openai, and later codec/anthropic and codec/gemini);
// codec/sse frames server-sent events and codec/rawjson finds top-level
// fields without decoding a document.
//
// Nothing under codec touches the network: it works on bytes and structs.
package codec

// Usage is the token accounting of one exchange.
type Usage struct {
	Input       int // prompt tokens, cached ones included
	Output      int // completion tokens, reasoning ones included
	CachedInput int // prompt tokens served from the provider's cache
	CacheWrite  int // prompt tokens written to the provider's cache (Anthropic), among Input
	Reasoning   int // completion tokens spent on reasoning
	// Units is what an upstream reports it billed in a measure other
	// than tokens: seconds of transcribed audio, Cohere's search units.
	// What they are is the operation's to say. (Left out of the goldens'
	// JSON when zero, as it is for every operation they cover.)
	Units     int `json:",omitempty"`
	Estimated bool
}

// Total is what a tokens-per-minute limit charges.
func (u Usage) Total() int { return u.Input + u.Output }
