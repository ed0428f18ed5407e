package codec

import (
	"strconv"
	"time"
)

// RateLimit is what a provider says of its rate limits, in no style's
// words: on a 429, how long to wait, and on any answer what is left of the
// request and token quotas.
type RateLimit struct {
	// RetryAfter is how long the client should wait; 0 when not said.
	RetryAfter time.Duration
	// Requests and Tokens are the quotas; a Limit of 0 means not said.
	Requests, Tokens Quota
}

// Quota is one rate-limit window.
type Quota struct {
	Limit, Remaining int64
	Reset            time.Duration // until the window is full again
}

// HeaderReader is where a dialect reads an upstream's headers (fasthttp's
// ResponseHeader is one).
type HeaderReader interface{ Peek(key string) []byte }

// HeaderWriter is where a dialect writes a client's headers (fasthttp's
// ResponseHeader is one).
type HeaderWriter interface {
	SetBytesV(key string, value []byte)
}

// ParseRetryAfter reads a Retry-After value in seconds (the form providers
// send); 0 when absent or not a number. An absent value costs no
// allocation (strconv's error would).
func ParseRetryAfter(v []byte) time.Duration {
	if len(v) == 0 {
		return 0
	}
	if s, err := strconv.ParseFloat(string(v), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 0
}

// AppendRetryAfter appends d as a Retry-After value: whole seconds,
// rounded up, at least 1.
func AppendRetryAfter(dst []byte, d time.Duration) []byte {
	return strconv.AppendInt(dst, max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// ParseCount reads a header's count; -1 when absent or not a number. An
// absent value costs no allocation.
func ParseCount(v []byte) int64 {
	if len(v) == 0 {
		return -1
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// SetRetryAfter writes the Retry-After header every style reads, when rl
// says how long to wait; buf is scratch, returned for reuse.
func SetRetryAfter(h HeaderWriter, buf []byte, rl RateLimit) []byte {
	if rl.RetryAfter > 0 {
		buf = AppendRetryAfter(buf[:0], rl.RetryAfter)
		h.SetBytesV("Retry-After", buf)
	}
	return buf
}

// QuotaHeaders are a style's quota headers: for requests and then for
// tokens, the names of the limit, remaining and reset headers, and how
// the resets are written.
type QuotaHeaders struct {
	Names       [2][3]string
	ParseReset  func(v []byte) time.Duration
	AppendReset func(dst []byte, d time.Duration) []byte
}

// Read reads the quotas h reports into rl; a quota without a limit is left
// out.
func (qh *QuotaHeaders) Read(h HeaderReader, rl *RateLimit) {
	for i, q := range [2]*Quota{&rl.Requests, &rl.Tokens} {
		names := qh.Names[i]
		if q.Limit = ParseCount(h.Peek(names[0])); q.Limit <= 0 {
			*q = Quota{}
			continue
		}
		q.Remaining = max(ParseCount(h.Peek(names[1])), 0)
		q.Reset = qh.ParseReset(h.Peek(names[2]))
	}
}

// Write writes the quotas of rl that have a limit, and Retry-After; buf is
// scratch, returned for reuse.
func (qh *QuotaHeaders) Write(h HeaderWriter, buf []byte, rl RateLimit) []byte {
	for i, q := range [2]Quota{rl.Requests, rl.Tokens} {
		if q.Limit <= 0 {
			continue
		}
		names := qh.Names[i]
		buf = strconv.AppendInt(buf[:0], q.Limit, 10)
		h.SetBytesV(names[0], buf)
		buf = strconv.AppendInt(buf[:0], q.Remaining, 10)
		h.SetBytesV(names[1], buf)
		buf = qh.AppendReset(buf[:0], q.Reset)
		h.SetBytesV(names[2], buf)
	}
	return SetRetryAfter(h, buf, rl)
}
