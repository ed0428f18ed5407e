package codec

// ErrorKind classifies a failure so that each dialect can name it in its own
// words (an OpenAI "type", an Anthropic error type, a Gemini status).
type ErrorKind uint8

// The kinds of error the gateway reports.
const (
	KindServer            ErrorKind = iota // 500: a fault of the gateway
	KindInvalidRequest                     // 400
	KindAuthentication                     // 401
	KindPermission                         // 403
	KindNotFound                           // 404, and 503 for an unknown model
	KindTooLarge                           // 413
	KindRateLimitRequests                  // 429, requests per minute
	KindRateLimitTokens                    // 429, tokens per minute
	KindUpstream                           // 502: the upstream failed
	KindTimeout                            // 504: the upstream timed out
	KindUnavailable                        // 503: no channel can serve the model now
)

// Error is a failure to report to a client, in any dialect.
type Error struct {
	Status  int
	Kind    ErrorKind
	Message string
	Code    string // machine-readable code, "" for none
	Param   string // offending request field, "" for none
	// Type keeps the dialect's own type string of an upstream error that is
	// relayed to a client of the same dialect; "" derives it from Kind.
	Type string
	// RateLimit is what the upstream said of its limits with a 429: the
	// client's style says it in its own header names (or, Gemini's, in the
	// body).
	RateLimit RateLimit `json:",omitzero"`
	// UpstreamRequestID is the upstream's id of the error answer this
	// error was read from, for the client to quote to the provider; ""
	// for none.
	UpstreamRequestID string `json:",omitempty"`
}

func (e *Error) Error() string { return e.Message }

// KindForStatus guesses the kind of an upstream error from its HTTP status.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == 401:
		return KindAuthentication
	case status == 403:
		return KindPermission
	case status == 404:
		return KindNotFound
	case status == 413:
		return KindTooLarge
	case status == 429:
		return KindRateLimitRequests
	case status == 504:
		return KindTimeout
	case status >= 400 && status < 500:
		return KindInvalidRequest
	case status == 502:
		return KindUpstream
	case status == 503:
		return KindUnavailable
	default:
		return KindServer
	}
}
