package anthropic

import (
	"strconv"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
)

// Anthropic's rate-limit headers: anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset},
// the resets as RFC 3339 times, and retry-after in seconds.
var quotaHeaders = [2][3]string{
	{"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
	{"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
}

// now is the clock the resets are read and written against.
var now = time.Now

func (dialect) ReadRateLimit(h codec.HeaderReader, _ []byte) codec.RateLimit {
	rl := codec.RateLimit{RetryAfter: codec.ParseRetryAfter(h.Peek("Retry-After"))}
	for i, q := range [2]*codec.Quota{&rl.Requests, &rl.Tokens} {
		names := quotaHeaders[i]
		if q.Limit = codec.ParseCount(h.Peek(names[0])); q.Limit <= 0 {
			*q = codec.Quota{}
			continue
		}
		q.Remaining = max(codec.ParseCount(h.Peek(names[1])), 0)
		if t, err := time.Parse(time.RFC3339, string(h.Peek(names[2]))); err == nil {
			q.Reset = max(t.Sub(now()), 0)
		}
	}
	return rl
}

func (dialect) SetRateLimit(h codec.HeaderWriter, buf []byte, rl codec.RateLimit) []byte {
	for i, q := range [2]codec.Quota{rl.Requests, rl.Tokens} {
		if q.Limit <= 0 {
			continue
		}
		names := quotaHeaders[i]
		buf = strconv.AppendInt(buf[:0], q.Limit, 10)
		h.SetBytesV(names[0], buf)
		buf = strconv.AppendInt(buf[:0], q.Remaining, 10)
		h.SetBytesV(names[1], buf)
		buf = now().Add(q.Reset).UTC().Truncate(time.Second).AppendFormat(buf[:0], time.RFC3339)
		h.SetBytesV(names[2], buf)
	}
	return codec.SetRetryAfter(h, buf, rl)
}
