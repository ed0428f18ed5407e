package store

// The UsageWriter's own behaviour (dropping, retrying, flushing, closing)
// over a real SQLite store, with a hook in front of AddUsage to hold or
// fail a batch. Writing into both drivers is in the contract suite.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookStore runs before ahead of every AddUsage; an error from it fails
// the call. ping, when set, answers Ping instead of the store.
type hookStore struct {
	Store
	before func(ctx context.Context, rows []Usage) error
	ping   func() error
}

func (h *hookStore) Ping(ctx context.Context) error {
	if h.ping != nil {
		return h.ping()
	}
	return h.Store.Ping(ctx)
}

func (h *hookStore) AddUsage(ctx context.Context, rows []Usage) error {
	if err := h.before(ctx, rows); err != nil {
		return err
	}
	return h.Store.AddUsage(ctx, rows)
}

func sqliteStore(t *testing.T) Store {
	s, err := Open(t.Context(), "sqlite", filepath.Join(t.TempDir(), "usage.db"), Options{})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// errorLog collects what a writer reports.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) { l.mu.Lock(); l.errs = append(l.errs, err); l.mu.Unlock() }

func (l *errorLog) get() []error { l.mu.Lock(); defer l.mu.Unlock(); return l.errs }

func rowCount(t *testing.T, s Store) int {
	t.Helper()
	rows, err := s.Usage(t.Context(), UsageFilter{Limit: 10000})
	must(t, err)
	return len(rows)
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestUsageWriterDropsWhenFull(t *testing.T) {
	s := sqliteStore(t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	first := true // only the writer's goroutine reads and writes it
	hook := &hookStore{Store: s, before: func(context.Context, []Usage) error {
		if first {
			first = false
			entered <- struct{}{}
			<-release // hold the first batch: the writer has fallen behind
		}
		return nil
	}}
	w := NewUsageWriter(hook, UsageWriterOptions{Buffer: 4, Batch: 1})
	w.Record(Usage{RequestID: "first"})
	<-entered
	for i := range 4 {
		if !w.Record(Usage{RequestID: fmt.Sprint(i)}) {
			t.Fatalf("Record %d refused with room in the buffer", i)
		}
	}
	accepted := make(chan bool)
	go func() { accepted <- w.Record(Usage{RequestID: "over"}) }()
	select {
	case ok := <-accepted:
		if ok || w.Dropped() != 1 {
			t.Fatalf("Record into a full buffer: accepted %v, dropped %d", ok, w.Dropped())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Record into a full buffer blocks")
	}
	close(release)
	must(t, w.Close(t.Context()))
	if n := rowCount(t, s); n != 5 || w.Failed() != 0 {
		t.Fatalf("%d rows written, %d failed; want 5 and 0", n, w.Failed())
	}
}

func TestUsageWriterRetriesOnce(t *testing.T) {
	s := sqliteStore(t)
	calls := 0
	hook := &hookStore{Store: s, before: func(context.Context, []Usage) error {
		calls++ // only the writer's goroutine calls AddUsage
		if calls == 1 {
			return errors.New("database is locked")
		}
		return nil
	}}
	var log errorLog
	w := NewUsageWriter(hook, UsageWriterOptions{OnError: log.add})
	for i := range 3 {
		w.Record(Usage{RequestID: fmt.Sprint(i)})
	}
	must(t, w.Close(t.Context()))
	errs := log.get()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "writing 3 usage rows failed, retrying: database is locked") {
		t.Fatalf("reported %v, want the one failure", errs)
	}
	if n := rowCount(t, s); n != 3 || calls != 2 || w.Failed() != 0 {
		t.Fatalf("%d rows written in %d calls, %d failed; want 3 in 2, 0", n, calls, w.Failed())
	}
}

// One row the database refuses loses that row alone, not its batch.
func TestUsageWriterIsolatesARefusedRow(t *testing.T) {
	s := sqliteStore(t)
	hook := &hookStore{Store: s, before: func(_ context.Context, rows []Usage) error {
		for _, r := range rows {
			if r.RequestID == "bad" {
				return errors.New("invalid byte sequence for encoding UTF8: 0x00")
			}
		}
		return nil
	}}
	var log errorLog
	w := NewUsageWriter(hook, UsageWriterOptions{Batch: 100, OnError: log.add})
	for i := range 9 {
		id := fmt.Sprint(i)
		if i == 6 {
			id = "bad"
		}
		w.Record(Usage{RequestID: id})
	}
	must(t, w.Close(t.Context()))
	if n := rowCount(t, s); n != 8 || w.Failed() != 1 {
		t.Fatalf("%d rows written, %d failed; want 8 and 1", n, w.Failed())
	}
	errs := log.get()
	if len(errs) != 2 || !strings.Contains(errs[1].Error(), `usage row of request "bad" lost: invalid byte sequence`) {
		t.Fatalf("reported %v, want the failure and the one lost row", errs)
	}
}

// While the database is away the rows wait, and are written when it is
// back; nothing is lost.
func TestUsageWriterWaitsOutAnOutage(t *testing.T) {
	s := sqliteStore(t)
	var mu sync.Mutex
	down := true
	isDown := func() bool { mu.Lock(); defer mu.Unlock(); return down }
	refused := errors.New("connection refused")
	hook := &hookStore{Store: s,
		before: func(context.Context, []Usage) error {
			if isDown() {
				return refused
			}
			return nil
		},
		ping: func() error {
			if isDown() {
				return refused
			}
			return nil
		}}
	var log errorLog
	w := NewUsageWriter(hook, UsageWriterOptions{Batch: 2, Interval: 10 * time.Millisecond, OnError: log.add})
	for i := range 5 {
		w.Record(Usage{RequestID: fmt.Sprint(i)})
	}
	waitFor(t, "two failed tries", func() bool { return len(log.get()) >= 2 })
	if n := rowCount(t, s); n != 0 {
		t.Fatalf("%d rows written while the database was down", n)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	waitFor(t, "the kept rows written", func() bool { return rowCount(t, s) == 5 })
	must(t, w.Close(t.Context()))
	if w.Failed() != 0 {
		t.Fatalf("%d rows failed", w.Failed())
	}
	if msg := log.get()[0].Error(); !strings.Contains(msg, "the database is not answering") || !strings.Contains(msg, "rows kept, next try in 200ms") {
		t.Fatalf("first report %q", msg)
	}
}

func TestUsageWriterFlushes(t *testing.T) {
	s := sqliteStore(t)
	var mu sync.Mutex
	var sizes []int
	hook := &hookStore{Store: s, before: func(_ context.Context, rows []Usage) error {
		mu.Lock()
		sizes = append(sizes, len(rows))
		mu.Unlock()
		return nil
	}}
	// A full batch is written at once, without waiting for the interval.
	w := NewUsageWriter(hook, UsageWriterOptions{Batch: 10, Interval: time.Hour})
	for i := range 25 {
		w.Record(Usage{RequestID: fmt.Sprint(i)})
	}
	waitFor(t, "two full batches", func() bool { return rowCount(t, s) == 20 })
	must(t, w.Close(t.Context()))
	wantEqual(t, "batch sizes", sizes, []int{10, 10, 5})

	// A partial batch is written when the interval ticks, without Close.
	w = NewUsageWriter(s, UsageWriterOptions{Batch: 1000, Interval: 20 * time.Millisecond})
	defer w.Close(t.Context())
	w.Record(Usage{RequestID: "late"})
	waitFor(t, "the interval's flush", func() bool { return rowCount(t, s) == 26 })
}

func TestUsageWriterCloseGivesUp(t *testing.T) {
	s := sqliteStore(t)
	entered := make(chan struct{}, 1)
	hook := &hookStore{Store: s, before: func(ctx context.Context, _ []Usage) error {
		entered <- struct{}{}
		<-ctx.Done() // a database that never answers
		return ctx.Err()
	}}
	var log errorLog
	w := NewUsageWriter(hook, UsageWriterOptions{Batch: 1, OnError: log.add})
	w.Record(Usage{RequestID: "stuck"})
	<-entered
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := w.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v, want the deadline", err)
	}
	if w.Failed() != 1 || len(log.get()) == 0 {
		t.Fatalf("failed %d, reported %v; want the stuck row counted and reported", w.Failed(), log.get())
	}
	if err := w.Close(t.Context()); err == nil {
		t.Fatal("a second Close succeeded")
	}
}
