package store

// UsageWriter takes usage rows from the request path and writes them in
// batches. The request path must never wait for the database, so Record
// only ever offers the row to a bounded channel: when the writer has fallen
// behind by a whole buffer, the row is dropped and counted, and the gateway
// keeps serving. One goroutine drains the channel into a batch and writes
// it, in one transaction, when it holds Batch rows or Interval has passed;
// the keys' last-used times ride along as one TouchKeys per batch instead
// of an UPDATE per request. Close writes whatever is left, so a SIGTERM
// that closes the writer before exiting loses nothing.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// UsageWriterOptions tune a UsageWriter; zero fields take the defaults.
type UsageWriterOptions struct {
	Buffer   int           // rows waiting to be written before Record drops; default 16384
	Batch    int           // rows per transaction; default 1000
	Interval time.Duration // longest a row waits for its batch; default 1s
	// Timeout bounds one write of a batch; default 10s.
	Timeout time.Duration
	// OnError hears of every failed write: called once for the first
	// failure (which is retried once) and again when the retry fails too
	// and the rows are lost. Called from the writer's goroutine; nil
	// ignores errors (Failed still counts the lost rows).
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

// retryDelay is the pause before the one retry of a failed batch: long
// enough for a lock held by another process or a failover to pass.
const retryDelay = 200 * time.Millisecond

// UsageWriter batches usage rows into a Store. Record is safe for
// concurrent use; Close must be called once.
type UsageWriter struct {
	s    Store
	o    UsageWriterOptions
	rows chan Usage

	mu     sync.RWMutex // guards closed against Record sending on a closed channel
	closed bool

	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc
	done   chan struct{}

	dropped atomic.Int64
	failed  atomic.Int64
}

// NewUsageWriter starts a writer into s.
func NewUsageWriter(s Store, o UsageWriterOptions) *UsageWriter {
	o.defaults()
	w := &UsageWriter{s: s, o: o, rows: make(chan Usage, o.Buffer), done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.run()
	return w
}

// Record queues u for writing without blocking. It returns false, and
// counts the row in Dropped, when the buffer is full or the writer closed.
func (w *UsageWriter) Record(u Usage) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if !w.closed {
		select {
		case w.rows <- u:
			return true
		default:
		}
	}
	w.dropped.Add(1)
	return false
}

// Dropped is the number of rows Record turned away.
func (w *UsageWriter) Dropped() int64 { return w.dropped.Load() }

// Failed is the number of rows lost because their batch failed twice, or
// because Close gave up before they were written.
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
	close(w.rows)
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

// run is the writer's goroutine: it gathers rows and flushes a batch when
// it is full, when the interval ticks, and when the channel is closed.
func (w *UsageWriter) run() {
	defer close(w.done)
	defer w.cancel()
	tick := time.NewTicker(w.o.Interval)
	defer tick.Stop()
	b := newUsageBatch(w.o.Batch)
	for {
		select {
		case u, ok := <-w.rows:
			if !ok {
				w.flush(b)
				return
			}
			if b.add(u) >= w.o.Batch {
				w.flush(b)
			}
		case <-tick.C:
			w.flush(b)
		}
	}
}

// usageBatch is the rows and key last-used times waiting to be written.
type usageBatch struct {
	rows    []Usage
	touched map[int64]time.Time
}

func newUsageBatch(n int) *usageBatch {
	return &usageBatch{rows: make([]Usage, 0, n), touched: make(map[int64]time.Time)}
}

// add appends u and returns the number of rows now waiting.
func (b *usageBatch) add(u Usage) int {
	b.rows = append(b.rows, u)
	if u.KeyID != 0 && u.Time.After(b.touched[u.KeyID]) {
		b.touched[u.KeyID] = u.Time
	}
	return len(b.rows)
}

func (b *usageBatch) reset() {
	clear(b.rows) // drop the strings they hold
	b.rows = b.rows[:0]
	clear(b.touched)
}

// flush writes the batch, retrying once, and empties it either way.
func (w *UsageWriter) flush(b *usageBatch) {
	defer b.reset()
	if len(b.rows) == 0 {
		return
	}
	if err := w.retry("write usage", func(ctx context.Context) error { return w.s.AddUsage(ctx, b.rows) }); err != nil {
		w.failed.Add(int64(len(b.rows)))
		w.o.OnError(fmt.Errorf("store: %d usage rows lost: %w", len(b.rows), err))
	}
	if err := w.retry("touch keys", func(ctx context.Context) error { return w.s.TouchKeys(ctx, b.touched) }); err != nil {
		w.o.OnError(fmt.Errorf("store: last-used times of %d keys lost: %w", len(b.touched), err))
	}
}

// retry runs write, and once more after a pause if it fails.
func (w *UsageWriter) retry(what string, write func(context.Context) error) error {
	err := w.attempt(write)
	if err == nil {
		return nil
	}
	w.o.OnError(fmt.Errorf("store: %s failed, retrying once: %w", what, err))
	select {
	case <-time.After(retryDelay):
	case <-w.ctx.Done():
		return err
	}
	return w.attempt(write)
}

func (w *UsageWriter) attempt(write func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(w.ctx, w.o.Timeout)
	defer cancel()
	return write(ctx)
}
