package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/proctime"
)

// BenchmarkAddUsageAttempts measures what kept attempts add to a batch of
// 1,000 usage rows on SQLite: none (the usual batch), 1% and 10% of the
// rows with a failover's two attempts. One op is one batch; cpu-µs/row is
// the process's CPU (SQLite's included) per usage row, which a shared
// machine disturbs less than ns/op, wall time.
//
//	go test -run '^$' -bench AddUsageAttempts -benchtime 200x ./store/
func BenchmarkAddUsageAttempts(b *testing.B) {
	for _, failed := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("failed=%d", failed), func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, "sqlite", filepath.Join(b.TempDir(), "attempts.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rows := make([]Usage, 1000)
			for i := range rows {
				rows[i] = Usage{KeyID: int64(i%20 + 1), Model: "m", Endpoint: "chat", Status: 200, RequestID: "req"}
				if i%1000 < failed {
					rows[i].Attempts = []Attempt{{Channel: "a", Status: 502, Error: "connection refused to 127.0.0.1:1",
						Duration: time.Millisecond}, {Channel: "b", Status: 200, Duration: time.Second}}
				}
			}
			b.ReportAllocs()
			start, cpu := time.Now(), proctime.CPU()
			for b.Loop() {
				for i := range rows {
					rows[i].Time = start.Add(time.Duration(i) * time.Millisecond)
				}
				if err := s.AddUsage(ctx, rows); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((proctime.CPU()-cpu).Microseconds())/float64(b.N*len(rows)), "cpu-µs/row")
		})
	}
}
