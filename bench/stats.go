package main

import (
	"fmt"
	"slices"
	"time"
)

// percentile returns the q-quantile (0 ≤ q ≤ 1) of sorted by the
// nearest-rank method, 0 for no samples.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// merge concatenates the workers' samples and sorts them.
func merge(parts [][]time.Duration) []time.Duration {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	all := make([]time.Duration, 0, n)
	for _, p := range parts {
		all = append(all, p...)
	}
	slices.Sort(all)
	return all
}

// median returns the median of xs (the mean of the middle two for an even
// count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// medianDur is median over durations.
func medianDur(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

// fmtDur formats a latency for the table: µs below 10 ms, else ms.
func fmtDur(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < 10*time.Millisecond:
		s = fmt.Sprintf("%dµs", (d+500*time.Nanosecond)/time.Microsecond)
	default:
		s = fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	if neg {
		return "−" + s
	}
	return s
}
