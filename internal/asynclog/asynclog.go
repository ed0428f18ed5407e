// Package asynclog is a buffered log sink that never makes its caller wait:
// lines are appended to a memory buffer and written out by a background
// goroutine. One unbuffered write per access-log line costs a system call
// on every request; batching turns that into one write per interval.
package asynclog

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Writer batches writes to an underlying writer. It is safe for concurrent use.
type Writer struct {
	out      io.Writer
	limit    int
	wakeAt   int // pending bytes that wake the writer
	mu       sync.Mutex
	buf      []byte
	spare    []byte
	woken    bool // wake was signalled for buf; under mu, cleared when flush takes buf
	wake     chan struct{}
	done     chan struct{}
	closed   chan struct{}
	once     sync.Once
	dropped  atomic.Int64
	interval time.Duration
}

// wakeAt is how many pending bytes have the writer write at once, when
// limit/2 is more. A busy gateway logs megabytes a second: left to the
// interval, its lines would go into a fresh part of a buffer of half a
// megabyte or more each time, and two such buffers (and the kernel's copy
// of them) would go through the core's cache every interval, taking the
// place of what its connections need. Written at 64 KiB, the same two
// buffers' first 64 KiB take every line, warm; the cost is a write every
// 64 KiB, about 90 a second at 19,000 requests a second.
const wakeAt = 64 << 10

// New returns a Writer that writes to out at least every interval and as
// soon as limit/2 bytes, or 64 KiB if fewer, are pending. When limit bytes
// are pending, further lines are dropped (and counted) rather than
// blocking the caller.
func New(out io.Writer, interval time.Duration, limit int) *Writer {
	w := &Writer{out: out, limit: limit, wakeAt: min(limit/2, wakeAt), interval: interval,
		wake: make(chan struct{}, 1), done: make(chan struct{}), closed: make(chan struct{})}
	go w.run()
	return w
}

// Write queues p. It never blocks on the underlying writer.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	if len(w.buf)+len(p) > w.limit {
		w.mu.Unlock()
		w.dropped.Add(1)
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	// One signal per buffer: while out is slow, the lines after the one
	// that filled it need not try the channel again.
	signal := !w.woken && len(w.buf) >= w.wakeAt
	w.woken = w.woken || signal
	w.mu.Unlock()
	if signal {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// Dropped is the number of writes lost to a full buffer.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

// Close writes what is pending and stops the background goroutine.
func (w *Writer) Close() error {
	w.once.Do(func() { close(w.done) })
	<-w.closed
	return nil
}

func (w *Writer) run() {
	defer close(w.closed)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-w.wake:
		case <-w.done:
			w.flush()
			return
		}
		w.flush()
	}
}

func (w *Writer) flush() {
	w.mu.Lock()
	w.buf, w.spare = w.spare[:0], w.buf
	w.woken = false
	w.mu.Unlock()
	if len(w.spare) > 0 {
		w.out.Write(w.spare) //nolint:errcheck // nowhere left to report a failing log
	}
}
