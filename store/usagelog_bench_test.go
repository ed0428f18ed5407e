package store

// BenchmarkUsageWriter measures what the usage log costs the gateway: the
// process's CPU time (user and system, every thread: Record on the request
// path, the writer's goroutine, the driver, SQLite itself when it runs in
// process, the garbage collector) while b.N rows go through a real
// UsageWriter into a real store at a steady rate, divided by b.N. One op
// is one row, so allocs/op and B/op are per row too; ns/op is wall time
// and only shows the pacing. The pacing itself (a millisecond's sleep and
// a millisecond's rows, over and over; -usage-step) costs CPU that is not the usage
// log's: it is measured once alone, shown as pacer-µs/row, and taken out
// of cpu-µs/row.
//
//	go test -run '^$' -bench UsageWriter -benchtime 150000x ./store/
//	go test -run '^$' -bench UsageWriter -benchtime 150000x -usage-rate 30000 ./store/
//
// For PostgreSQL the figure is the gateway's side only; the server's CPU is
// another process's. Without the PostgreSQL binaries that half is skipped.

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/pgtest"
)

var (
	usageRate = flag.Int("usage-rate", 15000, "rows per second BenchmarkUsageWriter pushes")
	batchFlag = flag.Int("usage-batch", 0, "BenchmarkUsageWriter's UsageWriterOptions.Batch; 0: the default")
	usageStep = flag.Duration("usage-step", time.Millisecond, "BenchmarkUsageWriter pushes a step's rows at a time, then sleeps")
	unitsFlag = flag.Bool("usage-units", false, "BenchmarkUsageWriter's rows have units too, as images requests")
	shapeFlag = flag.String("usage-shape", "mixed", "BenchmarkUsageWriter's and BenchmarkAddUsage's rows: mixed (5 keys, 3 models, 4 channels, cached and reasoning tokens) or sidecar (one key, model and channel, no cached or reasoning tokens, as a gateway beside one application)")
)

func BenchmarkUsageWriter(b *testing.B) {
	// The writer's own share: Record, the channel, the batching, with a
	// store that writes nothing.
	b.Run("discard", func(b *testing.B) { benchUsageWriter(b, "", nil) })
	b.Run("sqlite", func(b *testing.B) {
		benchUsageWriter(b, "sqlite", func(b *testing.B) string { return filepath.Join(b.TempDir(), "usage.db") })
	})
	b.Run("postgres", func(b *testing.B) {
		srv, err := pgtest.Start(context.Background())
		if errors.Is(err, pgtest.ErrNotInstalled) {
			b.Skip(err)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { srv.Stop() })
		n := 0
		benchUsageWriter(b, "postgres", func(b *testing.B) string {
			n++
			dsn, err := srv.CreateDatabase(context.Background(), fmt.Sprintf("bench%d", n))
			if err != nil {
				b.Fatal(err)
			}
			return dsn
		})
	})
}

func benchUsageWriter(b *testing.B, driver string, newDSN func(*testing.B) string) {
	b.Run(fmt.Sprintf("%drows/s", *usageRate), func(b *testing.B) {
		var s Store = discardStore{}
		if driver != "" {
			var err error
			if s, err = Open(b.Context(), driver, newDSN(b), Options{}); err != nil {
				b.Fatal(err)
			}
			defer s.Close()
		}
		rows := benchRows()
		var errs int
		w := NewUsageWriter(s, UsageWriterOptions{Batch: *batchFlag, OnError: func(error) { errs++ }})
		b.ReportAllocs()
		before := cpuTime()
		b.ResetTimer()
		pushPaced(w, rows, b.N, *usageRate)
		if err := w.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu := cpuTime() - before
		if errs > 0 || w.Dropped() > 0 || w.Failed() > 0 {
			b.Fatalf("%d errors, %d rows dropped, %d failed", errs, w.Dropped(), w.Failed())
		}
		pacer := pacerCost()
		b.ReportMetric(float64((cpu-pacer*time.Duration(b.N)).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/row")
		b.ReportMetric(float64(pacer.Nanoseconds())/1e3, "pacer-µs/row")
	})
}

// BenchmarkAddUsage is the store's share alone: one op is a batch of
// 1,000 rows (-usage-batch) written by AddUsage on SQLite (with units too
// with -usage-units), without the writer, its pacing or its goroutine;
// cpu-µs/row is the process's CPU time a row, which a busy machine
// disturbs less than ns/op.
func BenchmarkAddUsage(b *testing.B) {
	s, err := Open(b.Context(), "sqlite", filepath.Join(b.TempDir(), "usage.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rows := benchRows()[:cmp.Or(*batchFlag, 1000)]
	start, n := time.Now(), 0
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		for i := range rows {
			rows[i].Time = start.Add(time.Duration(n) * time.Millisecond)
			n++
		}
		if err := s.AddUsage(b.Context(), rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/float64(n)/1e3, "cpu-µs/row")
}

// pushPaced records n rows at rate rows per second, a step's worth at a
// time (-usage-step), each stamped with the time it is recorded. With w nil it
// only paces.
func pushPaced(w *UsageWriter, rows []Usage, n, rate int) {
	start := time.Now()
	for pushed := 0; pushed < n; {
		due := min(n, int(time.Since(start).Seconds()*float64(rate))+1)
		for ; pushed < due; pushed++ {
			u := rows[pushed%len(rows)]
			u.Time = time.Now()
			if w != nil {
				w.Record(u)
			}
		}
		time.Sleep(*usageStep)
	}
}

var pacer struct {
	once sync.Once
	cost time.Duration
}

// pacerCost is the CPU time pushPaced takes per row without a writer,
// measured over three seconds' rows the first time it is asked.
func pacerCost() time.Duration {
	pacer.once.Do(func() {
		rows, n := benchRows(), 3**usageRate
		before := cpuTime()
		pushPaced(nil, rows, n, *usageRate)
		pacer.cost = (cpuTime() - before) / time.Duration(n)
	})
	return pacer.cost
}

// benchRows are rows as the gateway writes them: a few keys, models and
// channels (one of each with -usage-shape sidecar), a distinct request id
// each.
func benchRows() []Usage {
	rows := make([]Usage, max(4096, *batchFlag))
	for i := range rows {
		rows[i] = Usage{KeyID: int64(1 + i%5), KeyName: fmt.Sprintf("team-%d", i%5),
			Model: []string{"gpt-4o-mini", "claude-sonnet-4", "gemini-2.5-flash"}[i%3], Channel: fmt.Sprintf("channel-%d", i%4),
			Status: 200, Input: 1200 + int64(i%300), Output: 300 + int64(i%90), Cached: 1024, Reasoning: int64(i % 7),
			Latency: time.Duration(800+i%400) * time.Millisecond, FirstToken: time.Duration(200+i%50) * time.Millisecond,
			RequestID: fmt.Sprintf("req_%022d", i), ClientStyle: "openai"}
		if *shapeFlag == "sidecar" {
			rows[i].KeyID, rows[i].KeyName, rows[i].Model, rows[i].Channel = 1, "app", "gpt-4o-mini", "openai"
			rows[i].Cached, rows[i].Reasoning = 0, 0
		}
		if *unitsFlag {
			rows[i].Endpoint, rows[i].Units, rows[i].Unit = "images.generations", int64(1+i%4), UnitImages
		}
	}
	return rows
}

// discardStore takes usage rows and writes nothing.
type discardStore struct{ Store }

func (discardStore) AddUsage(context.Context, []Usage) error { return nil }
func (discardStore) Ping(context.Context) error              { return nil }

// cpuTime is the CPU time, user and system, the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
