package openai

import (
	"strconv"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// quotaHeaders are OpenAI's: x-ratelimit-{limit,remaining,reset}-{requests,tokens},
// the resets as durations ("1s", "6m0s", written "12.5s").
var quotaHeaders = codec.QuotaHeaders{
	Names: [2][3]string{
		{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
		{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
	},
	ParseReset: func(v []byte) time.Duration {
		// v is not kept (ParseDuration's error quotes a copy): read in
		// place, a reset costs no allocation on every answer that has one.
		d, _ := time.ParseDuration(rawjson.UnsafeString(v))
		return d
	},
	AppendReset: func(dst []byte, d time.Duration) []byte {
		return append(strconv.AppendFloat(dst, d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64), 's')
	},
}

// ReadRateLimit reads the quota headers and the wait: retry-after in
// seconds, or retry-after-ms, which OpenAI also sends.
func (dialect) ReadRateLimit(h codec.HeaderReader, _ []byte) codec.RateLimit {
	rl := codec.RateLimit{RetryAfter: codec.ParseRetryAfter(h.Peek("Retry-After"))}
	if v := h.Peek("Retry-After-Ms"); len(v) > 0 {
		if ms, err := strconv.ParseFloat(string(v), 64); err == nil && ms > 0 {
			rl.RetryAfter = time.Duration(ms * float64(time.Millisecond))
		}
	}
	quotaHeaders.Read(h, &rl)
	return rl
}

func (dialect) SetRateLimit(h codec.HeaderWriter, buf []byte, rl codec.RateLimit) []byte {
	return quotaHeaders.Write(h, buf, rl)
}
