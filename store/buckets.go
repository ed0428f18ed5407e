package store

// UsageBuckets needs latency percentiles, and SQLite has no percentile
// function. Rather than two SQL dialects, the grouping is done in Go over
// one query both databases run alike: the filtered rows come ordered by
// bucket, key, model (endpoint) and latency, so each group arrives whole with its
// latencies sorted, and its p50 and p99 are read off by rank. The result is
// exact; the costs are bounded thus:
//
//   - time: every matching row is read once (the sort is the database's);
//   - memory: the latencies of one group at a time, 8 bytes per request in
//     the busiest (bucket, key, model), plus the buckets returned.
//
// Callers bound the work with the filter (a time range, keys); a chart over
// a month of a busy gateway is better served by wider buckets than by this
// method being clever.

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// UsageBuckets sums the filtered rows per bucket of width (buckets start at
// multiples of width since the Unix epoch, so they do not move with From),
// key and model, and endpoint when f.ByEndpoint, ordered by start, key id,
// model, then endpoint. Limit and BeforeID
// do not apply. Percentiles are nearest-rank: p50 is the smallest latency
// with at least half the requests at or below it.
func (s *sqlStore) UsageBuckets(ctx context.Context, f UsageFilter, width time.Duration) ([]UsageBucket, error) {
	if width <= 0 {
		return nil, fmt.Errorf("store: usage buckets: width %v must be positive", width)
	}
	f.BeforeID = 0 // does not apply (nor does Limit)
	w, ok, err := s.usageWhere(ctx, f, &where{args: []any{int64(width)}})
	if err != nil || !ok {
		return nil, s.wrap("usage buckets", err)
	}
	endpoint, order := "''", "1, key_id, model"
	if f.ByEndpoint {
		endpoint, order = "endpoint", order+", endpoint"
	}
	rows, err := s.r.QueryContext(ctx, bucketsSQL(endpoint, order, w), w.args...)
	if err != nil {
		return nil, s.wrap("usage buckets", err)
	}
	defer rows.Close()
	var g bucketGroup
	for rows.Next() {
		var start, latency int64
		var r UsageBucket
		var status int
		err := rows.Scan(&start, &r.KeyID, &r.Model, &r.Endpoint, &status, &r.Input, &r.Output,
			&r.Cached, &r.Reasoning, &latency)
		if err != nil {
			return nil, s.wrap("usage buckets", err)
		}
		r.Start = fromNS(start)
		g.add(r, status, latency)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("usage buckets", err)
	}
	out := g.finish()
	if err := s.bucketUnits(ctx, w, endpoint, out); err != nil {
		return nil, s.wrap("usage buckets", err)
	}
	// The databases order model names by their own collations; sort again
	// so both drivers return the same order.
	sort.SliceStable(out, func(i, j int) bool { return bucketLess(&out[i], &out[j]) })
	return out, nil
}

// bucketUnits adds to the buckets the units of their rows, summed by the
// database from the rows that have units only (unitRowsFrom): the query
// of the buckets reads no units, which keeps usage_units out of its plan.
// w is the buckets' filter, endpoint their endpoint column.
func (s *sqlStore) bucketUnits(ctx context.Context, w *where, endpoint string, out []UsageBucket) error {
	rows, err := s.r.QueryContext(ctx, bucketUnitsSQL(endpoint, w), w.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	type group struct {
		start, keyID    int64
		model, endpoint string
	}
	index := make(map[group]*UsageBucket, len(out))
	for i := range out {
		b := &out[i]
		index[group{toNS(b.Start), b.KeyID, b.Model, b.Endpoint}] = b
	}
	for rows.Next() {
		var g group
		var unit string
		var n int64
		if err := rows.Scan(&g.start, &g.keyID, &g.model, &g.endpoint, &unit, &n); err != nil {
			return err
		}
		if b := index[g]; b != nil { // always there: the same rows made it
			if b.Units == nil {
				b.Units = map[string]int64{}
			}
			b.Units[unit] += n
		}
	}
	return rows.Err()
}

// bucketsSQL reads the rows of the buckets, w's width first in its
// arguments, ordered as bucketGroup needs them. It reads no units.
func bucketsSQL(endpoint, order string, w *where) string {
	return `SELECT time_ns - time_ns % $1, key_id, model, ` + endpoint + `, status, input_tokens, output_tokens,
		cached_tokens, reasoning_tokens, latency_ns FROM usage_log` + w.sql() + ` ORDER BY ` + order + `, latency_ns`
}

// bucketUnitsSQL sums the units of the buckets' rows that have any, by
// bucket (as bucketsSQL groups them) and unit.
func bucketUnitsSQL(endpoint string, w *where) string {
	return `SELECT time_ns - time_ns % $1, key_id, model, ` + endpoint + `, unit, CAST(SUM(units) AS BIGINT)
		FROM (SELECT u.id, r.time_ns, l.key_id, l.model, l.channel, l.status, l.endpoint, l.unit, u.units
		FROM ` + unitRowsFrom + `) AS x` + w.sql() + ` GROUP BY 1, 2, 3, 4, 5`
}

// bucketGroup accumulates consecutive rows of the same bucket, key, model
// and endpoint; latencies arrive sorted.
type bucketGroup struct {
	done []UsageBucket
	cur  UsageBucket
	lat  []int64 // reused from group to group
}

func (g *bucketGroup) add(r UsageBucket, status int, latency int64) {
	if len(g.lat) > 0 && !(r.Start.Equal(g.cur.Start) && r.KeyID == g.cur.KeyID && r.Model == g.cur.Model &&
		r.Endpoint == g.cur.Endpoint) {
		g.close()
	}
	if len(g.lat) == 0 {
		g.cur = UsageBucket{Start: r.Start, KeyID: r.KeyID, Model: r.Model, Endpoint: r.Endpoint}
	}
	c := &g.cur
	c.Requests++
	if status >= 400 {
		c.Errors++
	}
	c.Input += r.Input
	c.Output += r.Output
	c.Cached += r.Cached
	c.Reasoning += r.Reasoning
	g.lat = append(g.lat, latency)
}

func (g *bucketGroup) close() {
	g.cur.LatencyP50 = time.Duration(g.lat[rank(50, len(g.lat))])
	g.cur.LatencyP99 = time.Duration(g.lat[rank(99, len(g.lat))])
	g.done = append(g.done, g.cur)
	g.lat = g.lat[:0]
}

func (g *bucketGroup) finish() []UsageBucket {
	if len(g.lat) > 0 {
		g.close()
	}
	return g.done
}

// rank is the index of the p-th percentile in n sorted values by the
// nearest-rank method: the ceil(p/100*n)-th value.
func rank(p, n int) int {
	return (p*n+99)/100 - 1
}

func bucketLess(a, b *UsageBucket) bool {
	if !a.Start.Equal(b.Start) {
		return a.Start.Before(b.Start)
	}
	if a.KeyID != b.KeyID {
		return a.KeyID < b.KeyID
	}
	if a.Model != b.Model {
		return a.Model < b.Model
	}
	return a.Endpoint < b.Endpoint
}
