package openai

import (
	"strconv"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
)

// OpenAI's rate-limit headers: x-ratelimit-{limit,remaining,reset}-{requests,tokens},
// the resets as durations ("1s", "6m0s"), and retry-after in seconds.
var quotaHeaders = [2][3]string{
	{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
	{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
}

func (dialect) ReadRateLimit(h codec.HeaderReader, _ []byte) codec.RateLimit {
	rl := codec.RateLimit{RetryAfter: codec.ParseRetryAfter(h.Peek("Retry-After"))}
	if ms, err := strconv.ParseFloat(string(h.Peek("Retry-After-Ms")), 64); err == nil && ms > 0 {
		rl.RetryAfter = time.Duration(ms * float64(time.Millisecond))
	}
	for i, q := range [2]*codec.Quota{&rl.Requests, &rl.Tokens} {
		names := quotaHeaders[i]
		if q.Limit = codec.ParseCount(h.Peek(names[0])); q.Limit <= 0 {
			*q = codec.Quota{}
			continue
		}
		q.Remaining = max(codec.ParseCount(h.Peek(names[1])), 0)
		q.Reset, _ = time.ParseDuration(string(h.Peek(names[2])))
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
		buf = AppendResetDuration(buf[:0], q.Reset)
		h.SetBytesV(names[2], buf)
	}
	return codec.SetRetryAfter(h, buf, rl)
}

// AppendResetDuration writes d as OpenAI's reset headers do: "12.5s".
func AppendResetDuration(dst []byte, d time.Duration) []byte {
	return append(strconv.AppendFloat(dst, d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64), 's')
}
