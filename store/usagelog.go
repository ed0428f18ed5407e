package store

// UsageWriter takes usage rows from the request path and writes them in
// batches. The request path must never wait for the database, so Record
// only appends the row to a bounded list under a mutex: when the writer
// has fallen behind by a whole buffer, the row is dropped and counted, and
// the gateway keeps serving. Record wakes the writer's goroutine only when
// the list reaches Batch rows, not for every row (a wake-up per row cost
// more CPU than the rest of Record); the goroutine writes up to Batch rows
// per transaction, when Batch rows wait or Interval has passed; AddUsage
// moves the keys' last-used times in the same transaction, once per batch
// instead of an UPDATE per request. Close writes whatever is left, so a
// SIGTERM that closes the writer before exiting loses nothing.
//
// A failed write is told apart by a Ping. When the database does not
// answer, the batch is kept and the rows behind it wait (up to Buffer of
// them; then Record drops), and they are written when it is back, trying
// again after a pause that doubles up to maxRetryDelay. When it answers,
// the batch is tried once more (a lock, a failover) and then cut in halves
// until the rows it refuses are found: those alone are lost, counted in
// Failed and reported.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// UsageWriterOptions tune a UsageWriter; zero fields take the defaults.
type UsageWriterOptions struct {
	// Buffer is the most rows waiting for a batch, beside the batch
	// being written (or kept while the database is away); default 16384.
	Buffer   int
	Batch    int           // rows per transaction, at most; default 1000
	Interval time.Duration // longest a row waits for its batch; default 1s
	// Timeout bounds one write of a batch; default 10s.
	Timeout time.Duration
	// OnError hears of failed writes and lost rows. Called from the
	// writer's goroutine; nil ignores errors (Failed still counts the
	// lost rows).
	OnError func(error)
}

func (o *UsageWriterOptions) defaults() {
	if o.Buffer <= 0 {
		o.Buffer = 16384
	}
	if o.Batch <= 0 {
		o.Batch = 1000
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.OnError == nil {
		o.OnError = func(error) {}
	}
}

// retryDelay is the first pause before a failed write is tried again:
// long enough for a lock held by another process or a failover to pass.
// While the database stays away the pause doubles up to maxRetryDelay.
const (
	retryDelay    = 200 * time.Millisecond
	maxRetryDelay = 30 * time.Second
)

// UsageWriter batches usage rows into a Store. Record is safe for
// concurrent use; Close must be called once.
type UsageWriter struct {
	s Store
	o UsageWriterOptions

	mu      sync.Mutex
	pending []Usage // rows taken by Record, not yet in a batch; at most Buffer
	closed  bool

	full chan struct{} // a token when pending reaches Batch rows
	stop chan struct{} // closed by Close
	done chan struct{}

	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc

	// Only the writer's goroutine uses these.
	delay   time.Duration // pause before the next try; 0 when the last write worked
	retryAt time.Time     // no write before this while the database is away

	dropped atomic.Int64
	failed  atomic.Int64
}

// NewUsageWriter starts a writer into s.
func NewUsageWriter(s Store, o UsageWriterOptions) *UsageWriter {
	o.defaults()
	w := &UsageWriter{s: s, o: o, pending: make([]Usage, 0, o.Batch),
		full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.run()
	return w
}

// Record queues u for writing without blocking. It returns false, and
// counts the row in Dropped, when the buffer is full or the writer closed.
func (w *UsageWriter) Record(u Usage) bool {
	w.mu.Lock()
	if w.closed || len(w.pending) >= w.o.Buffer {
		w.mu.Unlock()
		w.dropped.Add(1)
		return false
	}
	w.pending = append(w.pending, u)
	n := len(w.pending)
	w.mu.Unlock()
	if n == w.o.Batch {
		select {
		case w.full <- struct{}{}:
		default: // the writer has a token already
		}
	}
	return true
}

// Dropped is the number of rows Record turned away.
func (w *UsageWriter) Dropped() int64 { return w.dropped.Load() }

// Failed is the number of rows lost: refused by the database, or not
// written when Close gave up.
func (w *UsageWriter) Failed() int64 { return w.failed.Load() }

// Close stops taking rows, writes every row already taken and returns
// when they are written. If ctx ends first, the write in progress is
// abandoned, the rows not written are counted in Failed, and Close returns
// ctx's error.
func (w *UsageWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("store: usage writer closed twice")
	}
	w.closed = true
	close(w.stop)
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		w.cancel()
		<-w.done
		return ctx.Err()
	}
}

// run is the writer's goroutine: it writes a batch when Batch rows wait,
// and whatever waits when the interval ticks, unless the database is away
// and it is not yet time to try again. At Close it writes everything left.
func (w *UsageWriter) run() {
	defer close(w.done)
	defer w.cancel()
	tick := time.NewTicker(w.o.Interval)
	defer tick.Stop()
	b := newUsageBatch(w.o.Batch)
	var retry <-chan time.Time // fires when a batch kept back may be tried again
	for {
		partial := true
		select {
		case <-w.full:
			partial = false
		case <-tick.C:
		case <-retry:
		case <-w.stop:
			w.finish(b)
			return
		}
		if !w.due() {
			continue
		}
		// The rows that come while a batch is written go into the next
		// one when they fill it, or wait for the next tick: a batch of
		// the few that came meanwhile would cost nearly a full one.
		for ok := w.take(b, partial); ok && w.flush(b); ok = w.take(b, false) {
		}
		retry = nil
		if w.delay > 0 {
			retry = time.After(w.delay)
		}
	}
}

func (w *UsageWriter) due() bool { return !time.Now().Before(w.retryAt) }

// take fills b with up to Batch rows from the pending ones (rows a failed
// write kept in b stay first) and reports whether b is to be written: it
// is full, or partial is set and b is not empty.
func (w *UsageWriter) take(b *usageBatch, partial bool) bool {
	w.mu.Lock()
	n := min(len(w.pending), w.o.Batch-len(b.rows))
	if n <= 0 || !partial && len(b.rows)+len(w.pending) < w.o.Batch {
		w.mu.Unlock()
		return len(b.rows) >= w.o.Batch || partial && len(b.rows) > 0
	}
	from := len(b.rows)
	if from == 0 && n == len(w.pending) {
		// All of them into an empty batch: swap the lists, copy nothing.
		b.rows, w.pending = w.pending, b.rows
	} else {
		b.rows = append(b.rows, w.pending[:n]...)
		rest := copy(w.pending, w.pending[n:])
		clear(w.pending[rest:]) // drop the strings they hold
		w.pending = w.pending[:rest]
	}
	w.mu.Unlock()
	return true
}

// finish writes the last rows at Close, waiting out the database's
// absence until Close gives up.
func (w *UsageWriter) finish(b *usageBatch) {
	for w.take(b, true) {
		for !w.flush(b) {
			select {
			case <-time.After(w.delay):
			case <-w.ctx.Done():
				w.mu.Lock()
				rows := append(b.rows, w.pending...)
				w.pending = nil
				w.mu.Unlock()
				w.lose(rows, w.ctx.Err())
				return
			}
		}
	}
}

// usageBatch is the rows waiting to be written.
type usageBatch struct {
	rows []Usage
}

func newUsageBatch(n int) *usageBatch {
	return &usageBatch{rows: make([]Usage, 0, n)}
}

func (b *usageBatch) reset() {
	clear(b.rows) // drop the strings they hold
	b.rows = b.rows[:0]
}

// flush writes the batch and empties it, or, when the database does not
// answer, keeps the rows for a later try and returns false.
func (w *UsageWriter) flush(b *usageBatch) bool {
	if len(b.rows) == 0 {
		return true
	}
	err := w.attempt(func(ctx context.Context) error { return w.s.AddUsage(ctx, b.rows) })
	if err != nil && w.attempt(w.s.Ping) != nil {
		w.delay = min(max(2*w.delay, retryDelay), maxRetryDelay)
		w.retryAt = time.Now().Add(w.delay)
		w.o.OnError(fmt.Errorf("store: the database is not answering; %d usage rows kept, next try in %s: %w",
			len(b.rows), w.delay, err))
		return false
	}
	w.delay, w.retryAt = 0, time.Time{}
	if err != nil {
		w.o.OnError(fmt.Errorf("store: writing %d usage rows failed, retrying: %w", len(b.rows), err))
		w.isolate(b.rows)
	}
	b.reset()
	return true
}

// isolate writes rows the database refused as a batch: whole once more,
// then in halves, down to the single rows it refuses, which are lost.
func (w *UsageWriter) isolate(rows []Usage) {
	err := w.attempt(func(ctx context.Context) error { return w.s.AddUsage(ctx, rows) })
	switch {
	case err == nil:
	case len(rows) == 1:
		w.lose(rows, err)
	default:
		w.isolate(rows[:len(rows)/2])
		w.isolate(rows[len(rows)/2:])
	}
}

func (w *UsageWriter) lose(rows []Usage, err error) {
	w.failed.Add(int64(len(rows)))
	if len(rows) == 1 {
		w.o.OnError(fmt.Errorf("store: usage row of request %q lost: %w", rows[0].RequestID, err))
	} else {
		w.o.OnError(fmt.Errorf("store: %d usage rows lost: %w", len(rows), err))
	}
}

func (w *UsageWriter) attempt(write func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(w.ctx, w.o.Timeout)
	defer cancel()
	return write(ctx)
}
