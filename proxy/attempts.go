package proxy

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rosetta-gateway/rosetta/codec"
)

// What the console shows of a request's way through the channels: each
// attempt and how it ended. An ordinary request that one channel answered
// leaves nothing here (its usage row says it all); a request that failed
// over or failed is kept in a bounded ring on the node that served it, for
// the usage log's row detail, and a request of the playground (ServeAs)
// gets its attempts back whatever their outcome.

// Attempt is one upstream attempt of a request.
type Attempt struct {
	Channel string
	// Status is what the attempt ended with as the client would see it:
	// the upstream's status, or the gateway's 502/504 when none came.
	Status int
	// Error is why it failed, in words ("connection refused to
	// 127.0.0.1:1", "HTTP 503: overloaded"); empty when it answered.
	Error string
}

// recentFailedRequests bounds the ring of failed or failed-over requests.
const recentFailedRequests = 1000

// failedRequests remembers the attempts of the last requests that had a
// failed attempt. Only those take its lock, so the path of a request that
// its first channel answers never does.
type failedRequests struct {
	mu   sync.Mutex
	ring [recentFailedRequests]failedRequest
	next int
	byID map[string]int // request id → index in ring
}

type failedRequest struct {
	id       string
	attempts []Attempt
}

func (f *failedRequests) add(id string, attempts []Attempt) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byID == nil {
		f.byID = make(map[string]int, recentFailedRequests)
	}
	old := &f.ring[f.next]
	if i, ok := f.byID[old.id]; ok && i == f.next {
		delete(f.byID, old.id)
	}
	*old = failedRequest{id: id, attempts: attempts}
	f.byID[id] = f.next
	f.next = (f.next + 1) % recentFailedRequests
}

func (f *failedRequests) get(id string) []Attempt {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.byID[id]; ok {
		return slices.Clone(f.ring[i].attempts)
	}
	return nil
}

// Attempts returns the attempts of a recent request of this node that had
// a failed attempt, by its request id; nil when it is not (or no longer)
// known.
func (g *Gateway) Attempts(requestID string) []Attempt { return g.failed.get(requestID) }

// tried notes a failed attempt of x on ch: in the exchange, for the ring
// when it finishes, and in the playground's trace when there is one.
func (x *exchange) tried(ch *channel, e *codec.Error) {
	a := Attempt{Channel: ch.name, Status: e.Status, Error: x.cause}
	if a.Error == "" {
		a.Error = e.Message
	}
	x.cause = ""
	x.tries = append(x.tries, a)
	if x.trace != nil {
		*x.trace = append(*x.trace, a)
	}
}

// rememberFailed keeps the attempts of a finished request that had a
// failed one, with the final answer's channel when one answered.
func (g *Gateway) rememberFailed(x *exchange) {
	attempts := slices.Clone(x.tries)
	if x.status < 400 && x.channel != "" {
		attempts = append(attempts, Attempt{Channel: x.channel, Status: x.status})
	}
	g.failed.add(string(x.id), attempts)
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
