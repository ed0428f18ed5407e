package proxy

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/store"
)

// What the console shows of a request's way through the channels: each
// attempt and how it ended. An ordinary request that one channel answered
// has nothing more (its usage row says it all); a request that failed over
// or failed carries its attempts in its usage row, which the store keeps
// with the row (store.Usage.Attempts), and a request of the playground
// (ServeAs) gets its attempts back whatever their outcome. Only those pay:
// the path of a request its first channel answers takes no time and
// allocates nothing for them.

// Attempt is one upstream attempt of a request: its channel, the status it
// ended with, why it failed, and how long it took.
type Attempt = store.Attempt

// tried notes a failed attempt of x on ch: in the exchange, for its usage
// row, and in the playground's trace when there is one. The attempt began
// when the one before it ended, or at the request's start.
func (x *exchange) tried(ch *channel, e *codec.Error) {
	now := time.Now()
	a := Attempt{Channel: ch.name, Status: e.Status, Error: x.cause, Duration: now.Sub(x.tryStart())}
	if a.Error == "" {
		a.Error = e.Message
	}
	x.cause, x.triedAt = "", now
	x.tries = append(x.tries, a)
	if x.trace != nil {
		*x.trace = append(*x.trace, a)
	}
}

// tryStart is when the attempt under way began.
func (x *exchange) tryStart() time.Time {
	if x.triedAt.IsZero() {
		return x.start
	}
	return x.triedAt
}

// keptAttempts are the attempts of a finished request for its usage row:
// nil when none failed, else those that failed and the one that answered,
// which lasted until the request ended.
func (x *exchange) keptAttempts() []Attempt {
	if len(x.tries) == 0 {
		return nil
	}
	attempts := slices.Clone(x.tries)
	if x.status < 400 && x.channel != "" {
		end := x.start.Add(x.elapsed)
		attempts = append(attempts, Attempt{Channel: x.channel, Status: x.status, Duration: end.Sub(x.tryStart())})
	}
	return attempts
}

// transportCause says in words why an upstream at addr could not be used.
func transportCause(err error, addr string) string {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return "cannot resolve the host " + dns.Name
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused to " + addr
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by " + addr
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to " + addr
	case isTimeout(err):
		return "no answer in time from " + addr
	}
	return err.Error() + " (" + addr + ")"
}

// httpCause is an upstream's error answer in words: its status and message.
func httpCause(status int, msg string) string {
	s := "HTTP " + strconv.Itoa(status)
	if strings.Contains(msg, s) {
		return msg
	}
	return s + ": " + msg
}

// streamCause is why a stream failed before its first event.
func streamCause(err error) string { return "the stream ended before its first event: " + err.Error() }
