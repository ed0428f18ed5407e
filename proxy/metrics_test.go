package proxy

import (
	"fmt"
	"testing"
)

// TestMetricsCache: every key put is found, those compared first and those
// in the map alike, a snapshot a reader holds does not change under a
// later put, and past maxCachedMetrics no key is added.
func TestMetricsCache(t *testing.T) {
	var c metricsCache
	key := func(i int) metricsKey {
		return metricsKey{endpoint: fmt.Sprint("e", i%3), model: fmt.Sprint("m", i/3), status: 200 + i%2, stream: i%4 == 0}
	}
	if c.get(key(0)) != nil {
		t.Fatal("an empty cache finds a key")
	}
	want := map[metricsKey]*requestMetrics{}
	var held *metricsSnapshot
	for i := range maxCachedMetrics + 10 {
		r := new(requestMetrics)
		c.put(key(i), r)
		if i < maxCachedMetrics {
			want[key(i)] = r
		}
		if i == 1 {
			held = c.m.Load()
		}
	}
	for k, r := range want {
		if got := c.get(k); got != r {
			t.Fatalf("key %+v: %p, want %p", k, got, r)
		}
	}
	if got := c.get(key(maxCachedMetrics + 5)); got != nil {
		t.Errorf("a key past the bound was kept")
	}
	if len(held.first) != 2 || len(held.m) != 2 || held.first[1].k != key(1) {
		t.Errorf("a held snapshot changed: %d first keys, %d in its map", len(held.first), len(held.m))
	}
	if s := c.m.Load(); len(s.first) != firstMetrics {
		t.Errorf("%d keys compared first, want %d", len(s.first), firstMetrics)
	}

	// Misses of one key at once put it once each: it takes one of the
	// first places, not all of them.
	var d metricsCache
	for range firstMetrics {
		d.put(key(0), new(requestMetrics))
	}
	d.put(key(1), new(requestMetrics))
	if s := d.m.Load(); len(s.first) != 2 || s.first[1].k != key(1) {
		t.Errorf("a key put again took %d of the first places", len(s.first)-1)
	}
}
