package anthropic

import (
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
)

// now is the clock the resets are read and written against.
var now = time.Now

// quotaHeaders are Anthropic's: anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset},
// the resets as RFC 3339 times.
var quotaHeaders = codec.QuotaHeaders{
	Names: [2][3]string{
		{"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
		{"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
	},
	ParseReset: func(v []byte) time.Duration {
		t, err := time.Parse(time.RFC3339, string(v))
		if err != nil {
			return 0
		}
		return max(t.Sub(now()), 0)
	},
	AppendReset: func(dst []byte, d time.Duration) []byte {
		return now().Add(d).UTC().Truncate(time.Second).AppendFormat(dst, time.RFC3339)
	},
}

// ReadRateLimit reads the quota headers and retry-after (seconds).
func (dialect) ReadRateLimit(h codec.HeaderReader, _ []byte) codec.RateLimit {
	rl := codec.RateLimit{RetryAfter: codec.ParseRetryAfter(h.Peek("Retry-After"))}
	quotaHeaders.Read(h, &rl)
	return rl
}

func (dialect) SetRateLimit(h codec.HeaderWriter, buf []byte, rl codec.RateLimit) []byte {
	return quotaHeaders.Write(h, buf, rl)
}
