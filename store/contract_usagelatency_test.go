package store

import (
	"errors"
	"testing"
	"time"
)

// testUsageLatency: the median and p95 of each endpoint's requests over
// the filter's range and keys, exact (nearest-rank), the busiest endpoint
// first; past max rows none is ranked.
func testUsageLatency(t *testing.T, f *fixture) {
	var rows []Usage
	row := func(d time.Duration, key int64, endpoint string, latency time.Duration) {
		rows = append(rows, Usage{Time: at(d), KeyID: key, Model: "m", Endpoint: endpoint, Status: 200, Latency: latency})
	}
	for i := 100; i >= 1; i-- { // not in latency order
		row(time.Duration(i)*time.Second, 1, "chat", time.Duration(i)*time.Millisecond)
	}
	for _, ms := range []time.Duration{30, 10, 20} {
		row(time.Minute, 1, "embeddings", ms*time.Millisecond)
	}
	row(2*time.Minute, 1, "", 5*time.Millisecond) // from before endpoints were kept
	row(time.Minute, 2, "chat", time.Second)      // another key
	row(-2*time.Hour, 1, "chat", 10*time.Second)  // before the range
	must(t, f.s.AddUsage(f.ctx, rows))

	filter := UsageFilter{From: at(-time.Hour), To: at(time.Hour), KeyIDs: []int64{1}}
	got, err := f.s.UsageLatency(f.ctx, filter, 104)
	must(t, err)
	wantEqual(t, "latency by endpoint", got, []EndpointLatency{
		{Endpoint: "chat", Requests: 100, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond},
		{Endpoint: "embeddings", Requests: 3, P50: 20 * time.Millisecond, P95: 30 * time.Millisecond},
		{Endpoint: "", Requests: 1, P50: 5 * time.Millisecond, P95: 5 * time.Millisecond},
	})
	if _, err := f.s.UsageLatency(f.ctx, filter, 103); !errors.Is(err, ErrTooManyRows) {
		t.Fatalf("104 rows ranked with a cap of 103: %v", err)
	}
	got, err = f.s.UsageLatency(f.ctx, UsageFilter{From: at(-time.Hour), To: at(time.Hour), Endpoint: "chat"}, 1000)
	must(t, err)
	wantEqual(t, "chat of every key", got, []EndpointLatency{
		{Endpoint: "chat", Requests: 101, P50: 51 * time.Millisecond, P95: 96 * time.Millisecond}})
	got, err = f.s.UsageLatency(f.ctx, UsageFilter{From: at(2 * time.Hour), To: at(3 * time.Hour)}, 1000)
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("an empty range: %+v", got)
	}
}
