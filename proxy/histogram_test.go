package proxy

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestDurationHistogramAsPrometheus observes the same durations, bounds
// included, in a durationHistograms and a prometheus.Histogram of the same
// buckets: the buckets, count and sum they expose must agree.
func TestDurationHistogramAsPrometheus(t *testing.T) {
	h := newDurationHistograms("d_seconds", "d", latencyBuckets)
	want := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "d_seconds", Help: "d", Buckets: latencyBuckets})
	d := h.of("chat", true)
	for _, v := range []time.Duration{0, time.Millisecond, time.Millisecond + 1, 7 * time.Millisecond, 2500 * time.Microsecond,
		time.Second, 299 * time.Second, 300 * time.Second, time.Hour} {
		d.observe(v)
		want.Observe(v.Seconds())
	}
	var w dto.Metric
	if err := want.Write(&w); err != nil {
		t.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 2)
	h.Collect(ch)
	close(ch)
	var got dto.Metric
	if err := (<-ch).Write(&got); err != nil {
		t.Fatal(err)
	}
	gh, wh := got.GetHistogram(), w.GetHistogram()
	if gh.GetSampleCount() != wh.GetSampleCount() || gh.GetSampleSum() != wh.GetSampleSum() {
		t.Errorf("count %d, sum %v; prometheus: %d, %v", gh.GetSampleCount(), gh.GetSampleSum(), wh.GetSampleCount(), wh.GetSampleSum())
	}
	if len(gh.Bucket) != len(wh.Bucket) {
		t.Fatalf("%d buckets, prometheus %d", len(gh.Bucket), len(wh.Bucket))
	}
	for i, b := range gh.Bucket {
		if b.GetUpperBound() != wh.Bucket[i].GetUpperBound() || b.GetCumulativeCount() != wh.Bucket[i].GetCumulativeCount() {
			t.Errorf("bucket le=%v: %d; prometheus le=%v: %d", b.GetUpperBound(), b.GetCumulativeCount(),
				wh.Bucket[i].GetUpperBound(), wh.Bucket[i].GetCumulativeCount())
		}
	}
	labels := got.GetLabel()
	if len(labels) != 2 || labels[0].GetValue() != "chat" || labels[1].GetValue() != "true" {
		t.Errorf("labels %v, want endpoint chat, stream true", labels)
	}
}
