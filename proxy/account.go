package proxy

import (
	"sync"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

// finish settles the exchange's rate-limit reservation, writes its access
// log line and returns it to the pool. x must not be used afterwards.
func (g *Gateway) finish(x *exchange) {
	// One reading of the monotonic clock, the wall clock taken from the
	// start's: time.Now reads both, at ~40 ns each on the gateway's VMs.
	elapsed := time.Since(x.start)
	g.finishAt(x, x.start.Add(elapsed))
}

// finishAt is finish for an exchange whose end the caller read from the
// clock already (a whole answer's arrival, a few microseconds before the
// gateway has passed it on): no other reading of it.
func (g *Gateway) finishAt(x *exchange, now time.Time) {
	x.elapsed = now.Sub(x.start)
	g.settleLimits(x, now)
	g.metrics.observe(x)
	if g.access != nil {
		g.writeLine(x, now)
	} else {
		g.logExchange(x)
	}
	g.recordUsage(x)
	if x.inbound != nil {
		x.inbound.Release()
	}
	x.dropTranslation()
	clear(x.tries) // lets the causes go
	// Cleared whole, then given back what it keeps: a literal that reads x
	// itself is built aside and copied over it, twice the work.
	buf, parked, uri, tries := x.buf[:0], x.parked, x.uri[:0], x.tries[:0]
	*x = exchange{}
	x.g, x.buf, x.parked, x.uri, x.tries = g, buf, parked, uri, tries
	g.exchanges.Put(x)
}

// writeLine writes the exchange's access line into its scratch buffer,
// free once the answer is out. A stream's exchange, which parked its
// buffer for the stream's length, takes one from lines for the line: an
// open stream holds no line buffer either way.
func (g *Gateway) writeLine(x *exchange, now time.Time) {
	if !x.parked {
		x.buf = g.access.write(x.buf, x, now)
		return
	}
	line := lines.Get().(*[]byte)
	*line = g.access.write(*line, x, now)
	lines.Put(line)
}

// lines holds the line buffers of exchanges whose scratch buffer is parked.
var lines = sync.Pool{New: func() any { return new([]byte) }}

// UsageSink takes the usage rows of finished requests to the store:
// store.UsageWriter, which writes them in batches. A sink with a
// Failed() int64 method (the writer has one) has it exported as
// rosetta_usage_rows_failed_total.
type UsageSink interface {
	// Record queues a row. It is called on the request path, so it must
	// not block: with its buffer full it drops the row and returns false.
	Record(u store.Usage) bool
}

// recordUsage hands the usage row of a finished exchange to the sink.
// Requests without a key (refused before authentication), model listings
// and token counts make no row: they use no model.
func (g *Gateway) recordUsage(x *exchange) {
	if g.usage == nil || x.key == nil || x.utility {
		return
	}
	u := x.usage
	units, unit := x.billedUnits()
	ok := g.usage.Record(store.Usage{
		Time:        x.start,
		KeyID:       x.key.ID,
		KeyName:     x.key.Name,
		Model:       x.model,
		Channel:     x.channel,
		Status:      x.status,
		Input:       int64(u.Input),
		Output:      int64(u.Output),
		Cached:      int64(u.CachedInput),
		Reasoning:   int64(u.Reasoning),
		Latency:     x.elapsed,
		FirstToken:  x.ttfb,
		RequestID:   string(x.id),
		ClientStyle: x.style.String(),
		Endpoint:    x.op.name,
		Units:       int64(units),
		Unit:        unit,
		Attempts:    x.keptAttempts(),
	})
	if !ok {
		g.metrics.usageDropped.Inc()
	}
}

// billedUnits is what the exchange used in its operation's unit: as the
// upstream reports it, else as the request asked for it when it was
// answered (a refused request made no image and read no text).
func (x *exchange) billedUnits() (int, string) {
	n := x.usage.Units
	if n == 0 && x.status < 300 {
		n = x.units
	}
	if n <= 0 || x.op.unit == "" {
		return 0, ""
	}
	return n, x.op.unit
}
