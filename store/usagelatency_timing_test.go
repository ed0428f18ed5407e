package store

import (
	"context"
	"flag"
	"path/filepath"
	"testing"
	"time"
)

var latencyRows = flag.Int("latency-rows", 100000, "rows BenchmarkUsageLatency ranks")

// BenchmarkUsageLatency measures what the console's latency per endpoint
// costs on SQLite: one UsageLatency over -latency-rows rows of a day, four
// endpoints, beside UsageBuckets by endpoint over the same rows (the
// usage page makes both calls). ns/op is one call.
//
//	go test -run '^$' -bench UsageLatency -benchtime 5x ./store/
func BenchmarkUsageLatency(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite", filepath.Join(b.TempDir(), "latency.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	endpoints := []string{"chat", "embeddings", "responses", "audio.speech"}
	n := *latencyRows
	step := 24 * time.Hour / time.Duration(n)
	batch := make([]Usage, 0, 1000)
	for i := range n {
		batch = append(batch, Usage{Time: at(time.Duration(i) * step), KeyID: int64(i%20 + 1), Model: "m",
			Endpoint: endpoints[i%len(endpoints)], Status: 200, Latency: time.Duration(i*7919%100000) * time.Microsecond})
		if len(batch) == cap(batch) || i == n-1 {
			if err := s.AddUsage(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	f := UsageFilter{From: at(0), To: at(24 * time.Hour), ByEndpoint: true}
	b.Run("latency", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.UsageLatency(ctx, f, n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("buckets", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.UsageBuckets(ctx, f, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
}
